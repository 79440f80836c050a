import { api, must, once, type Schema, succeeded } from '../api.js';
import type { PreviewChoices, UrlMatch } from './onsite-urls.js';

// Issue 48's resources as the console reads and writes them: sites (the customer's own website,
// with its snippet) and experiences (changes to its pages by CSS selector), through the SDK's
// generated types. The pick and preview tokens and the analytics come with other parts of the
// issue: they are read by path with the shapes until the generated types name them.

export type Site = Schema<'Site'>;
export type Experience = Schema<'Experience'>;
/** One change as the API takes it: the fields besides `selector` and `action` depend on the action. */
export type Change = Schema<'ExperienceChange'>;
export type ChangeAction = Change['action'];
export type ExperienceStatus = Experience['status'];
/** What a create sends (a PATCH sends it without `siteId`). */
export type ExperienceBody = Schema<'ExperienceCreate'>;

export const CHANGE_ACTIONS: readonly ChangeAction[] = ['text', 'attribute', 'hide', 'section'];
export const ATTRIBUTES: readonly NonNullable<Change['attribute']>[] = ['href', 'src', 'alt', 'title', 'placeholder', 'aria-label'];

export const URL_MATCH_TYPES = ['exact', 'prefix', 'glob'] as const;
export type { PreviewChoices, UrlMatch };
export const EXPERIENCE_STATUSES: readonly ExperienceStatus[] = ['draft', 'live', 'paused'];

export interface ArmResults {
  arm: 'personalised' | 'holdout' | string;
  views: number;
  visitors: number;
  conversions: number;
  conversionRate: number | null;
}
/** `GET /v0/experiences/{id}/analytics`; the last three only with a holdout (the experiments' analysis). */
export interface ExperienceAnalytics {
  totals: { views: number; visitors: number; clicks: number; conversions: number };
  arms: ArmResults[];
  decision?: string;
  /** The arm the decision names, null while none. */
  winner?: string | null;
  pValue?: number | null;
  lift?: number | { estimate: number; low: number; high: number } | null;
}

type Init = { params?: { query?: Record<string, unknown>; header?: Record<string, string> }; body?: unknown };
type LooseRequest = (method: string, url: string, init?: Init) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
const request = api.request as unknown as LooseRequest;
const send = async <T>(method: string, url: string, init?: Init): Promise<T> => must(await request(method, url, init)) as T;
const id = encodeURIComponent;
const page = (cursor: string | undefined, limit = 50) => ({ limit, ...(cursor ? { cursor } : {}) });

export const listSites = async (cursor?: string, limit = 50) =>
  must(await api.GET('/v0/sites', { params: { query: page(cursor, limit) } }));
export const getSite = async (siteId: string) => must(await api.GET('/v0/sites/{site_id}', { params: { path: { site_id: siteId } } }));
export const createSite = async (body: { name: string; origins: string[] }) =>
  must(await api.POST('/v0/sites', { params: { header: once() }, body }));
export const updateSite = async (siteId: string, body: { name?: string; origins?: string[] }) =>
  must(await api.PATCH('/v0/sites/{site_id}', { params: { path: { site_id: siteId } }, body }));
export const deleteSite = async (siteId: string) =>
  succeeded(await api.DELETE('/v0/sites/{site_id}', { params: { path: { site_id: siteId } } }));

export const listExperiences = async (siteId: string, cursor?: string) =>
  must(await api.GET('/v0/experiences', { params: { query: { siteId, ...page(cursor) } } }));
export const getExperience = async (experienceId: string) =>
  must(await api.GET('/v0/experiences/{experience_id}', { params: { path: { experience_id: experienceId } } }));
export const createExperience = async (body: ExperienceBody) =>
  must(await api.POST('/v0/experiences', { params: { header: once() }, body }));
export const updateExperience = async (experienceId: string, body: Omit<ExperienceBody, 'siteId'>) =>
  must(await api.PATCH('/v0/experiences/{experience_id}', { params: { path: { experience_id: experienceId } }, body }));
export const deleteExperience = async (experienceId: string) =>
  succeeded(await api.DELETE('/v0/experiences/{experience_id}', { params: { path: { experience_id: experienceId } } }));

export const experienceAnalytics = (experienceId: string, query: { startDate: string; endDate: string }) =>
  send<ExperienceAnalytics>('GET', `/v0/experiences/${id(experienceId)}/analytics`, { params: { query } });

/** A one-time token for "Pick an element" on one of the site's pages (issue 48, §5). */
export const pickToken = (siteId: string) =>
  send<{ token: string; expiresAt: string }>('POST', `/v0/sites/${id(siteId)}/pick-tokens`, { params: { header: once() }, body: {} });

/** A one-time token that forces the experience's changes in one tab, as the chosen visitor would see them. */
export const previewToken = (experienceId: string, body: PreviewChoices) =>
  send<{ token: string; expiresAt: string }>('POST', `/v0/experiences/${id(experienceId)}/preview-tokens`, {
    params: { header: once() },
    body,
  });
