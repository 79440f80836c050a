import type { Kysely } from 'kysely';
import { type FileVariant, type UrlSigner, findShownImages } from '../assets/index.js';
import { findAudience, findHomeAudience } from '../audiences/index.js';
import type { Database } from '../db/types.js';
import { findFallbackDomain } from '../domains/index.js';
import { type PreviewDraft, type PreviewVisit, findPage } from '../pages/index.js';
import { documentStyles, fileSrc, render, sectionImageIds, viewOf } from '../render/index.js';
import { load } from './serve/load.js';

/** The page and, when one is named, its audience; `audience: false`: the audience is not one of the page's. */
async function subject(db: Kysely<Database>, tenantId: string, pageId: string, audienceId: string | undefined) {
  const page = await findPage(db, tenantId, pageId);
  if (!page) return undefined;
  const audience = audienceId === undefined ? undefined : await findAudience(db, tenantId, pageId, audienceId);
  if (audienceId !== undefined && !audience) return { audience: false as const };
  return { audience: true as const, page, found: audience };
}

/**
 * The segment a described visit would be served and its token values (site/serve/preview-visit.ts,
 * the served pages' own choosing), handed in by app.ts: this module sits below the visitor plane.
 */
export type VisitChooser = (
  db: Kysely<Database>,
  tenantId: string,
  pageId: string,
  visit: PreviewVisit,
) => Promise<{ audienceId: string | undefined; token: (name: string) => string | null }>;

/** Whether there is something to preview, without rendering it: what a preview link is issued for. */
export async function previewExists(db: Kysely<Database>, tenantId: string, pageId: string, audienceId: string | undefined) {
  const found = await subject(db, tenantId, pageId, audienceId);
  return found && { audience: found.audience };
}

/**
 * The document a visitor would get for the page and audience, for any page status: without the
 * measuring script or a view token (a preview is no visit), and never to be indexed. Its images
 * come from the tenant's fallback domain, where the files are served, at the public origin `origin`
 * makes of it (returned, for the policy). Undefined: no such page; `audience: false`: the audience
 * is not one of the page's. `styles`: the texts of its `<style>` elements, for a policy that
 * allows exactly them. `visit`: a described visit chooses the audience instead (as a served page's
 * visit does) and fills the visit's tokens; `shownAudienceId` says which it got. `draft`: unsaved
 * content and actions (checked by the caller) shown instead of what is stored, for the audience as for the page itself; nothing of it is written. The draft's
 * images may be on no live page yet, so the tenant's domains would not serve them: they come by
 * the API's signed links (`signer`) instead, valid for an hour.
 */
export async function previewDocument(
  db: Kysely<Database>,
  tenantId: string,
  pageId: string,
  audienceId: string | undefined,
  origin: (hostname: string) => string,
  draft: PreviewDraft | undefined,
  signer: Pick<UrlSigner, 'url'>,
  visit?: { described: PreviewVisit; choose: VisitChooser },
) {
  const chosen = visit && (await visit.choose(db, tenantId, pageId, visit.described));
  const found = await subject(db, tenantId, pageId, chosen ? chosen.audienceId : audienceId);
  if (!found) return undefined;
  if (!found.audience) return { audience: false as const };
  // A visit no segment matches gets what everyone gets: the home audience, else the page.
  const shown = chosen && !found.found ? await findHomeAudience(db, tenantId, pageId) : found.found;
  const domain = await findFallbackDomain(db, tenantId);
  const files = domain ? origin(domain.hostname) : '';
  const page = draft ? { ...found.page, actions: JSON.stringify(draft.actions), header_action_id: draft.headerActionId } : found.page;
  const unsaved = draft?.content ? await imageFiles(db, tenantId, draft.content) : new Set<string>();
  const shownId = shown?.id ?? null;
  const shows = { tenantId, pageId, audienceId: shownId, shows: shownId, versionId: null };
  const rows = await load(db, shows, { page, audience: shown, ...(draft?.content ? { draft: draft.content } : {}) });
  if (!rows) return undefined;
  const view = viewOf(rows, {
    ...(chosen ? { visitTokens: { visit: chosen.token } } : {}),
    path: '/',
    measured: false,
    preview: true,
    fileSrc: (fileId, variant: FileVariant = 'original') =>
      unsaved.has(fileId) ? pathOf(signer.url(fileId, variant)) : `${files}${fileSrc(fileId, variant)}`,
    fileUrl: (fileId) => `${files}${fileSrc(fileId)}`,
  });
  return {
    audience: true as const,
    html: render(view).parts.join(''),
    styles: documentStyles(view),
    origin: files,
    shownAudienceId: shown?.id ?? null,
  };
}

/**
 * A signed link without its origin: a preview is a document of the API's origin (its link, or the
 * answer of `/v0/pages/{page_id}/preview`), which is where the link's path reaches, whatever
 * PUBLIC_BASE_URL names (a proxy's prefix is in the path, and kept).
 */
const pathOf = (link: string) => {
  const parsed = new URL(link);
  return parsed.pathname + parsed.search;
};

/** The files of the content's section images: each image's own and its variants'. */
async function imageFiles(db: Kysely<Database>, tenantId: string, content: NonNullable<PreviewDraft['content']>): Promise<Set<string>> {
  const images = await findShownImages(db, tenantId, sectionImageIds(content));
  return new Set([...images.values()].flatMap((image) => [image.fileId, ...image.variants.map((v) => v.fileId)]));
}

/** Previews as the pages area asks for them (src/pages/preview.ts), a draft's images by `signer`'s links. */
export function previewRenderer(signer: Pick<UrlSigner, 'url'>, choose: VisitChooser) {
  return {
    exists: previewExists,
    document: (
      db: Kysely<Database>,
      tenantId: string,
      pageId: string,
      audienceId: string | undefined,
      origin: (hostname: string) => string,
      draft?: PreviewDraft,
      visit?: PreviewVisit,
    ) => previewDocument(db, tenantId, pageId, audienceId, origin, draft, signer, visit && { described: visit, choose }),
  };
}
