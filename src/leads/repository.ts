import type { Kysely, Transaction } from 'kysely';
import type { Database, LeadsTable } from '../db/types.js';
import { invalidField } from '../http/errors.js';
import { countRows, keysetList, NEWEST_FIRST } from '../http/pagination.js';
import { toInstant } from '../time.js';
import type { Mentions } from '../db/mentions.js';
import type { Lead, LeadListQuery } from './schemas.js';

/** Written by the lead form's transaction (src/site/forms/leads.ts). */
export async function insertLead(trx: Transaction<Database>, row: LeadsTable): Promise<void> {
  await trx.insertInto('leads').values(row).execute();
}

/** What a visitor typed on a lead: one field naming a person makes the others theirs too, as a session's form fields. */
const SUBMITTED = ['submitted_name', 'submitted_email', 'submitted_phone'] as const;

/**
 * A person's erasure (src/persons/erasure.ts): their leads go with them; a lead of someone else
 * forgets that it came through their link, and forgets what was typed when it mentions them
 * (someone typed their address on another person's link).
 */
export async function forgetLeadsOf(trx: Transaction<Database>, tenantId: string, personId: string, mentions: Mentions): Promise<void> {
  await trx.deleteFrom('leads').where('tenant_id', '=', tenantId).where('person_id', '=', personId).execute();
  await trx
    .updateTable('leads')
    .set({ via_person_id: null })
    .where('tenant_id', '=', tenantId)
    .where('via_person_id', '=', personId)
    .execute();
  const rows = await trx
    .selectFrom('leads')
    .select(['id', ...SUBMITTED])
    .where('tenant_id', '=', tenantId)
    .where((eb) => eb.or(SUBMITTED.map((c) => mentions.mayMention(c))))
    .execute();
  for (const row of rows) {
    if (!SUBMITTED.some((c) => mentions.test(row[c]))) continue;
    await trx
      .updateTable('leads')
      .set({ submitted_name: '', submitted_email: '', submitted_phone: '' })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', row.id)
      .execute();
  }
}

export interface LeadFilters {
  pageId: string | undefined;
  start: string | undefined;
  end: string | undefined;
}

function instant(value: string, path: string): string {
  const iso = toInstant(value, true);
  if (iso === undefined) throw invalidField(path, 'is not a date-time of years 0001-9999 in UTC');
  return iso;
}

/** The list's filters as stored instants: `startDate` inclusive, `endDate` exclusive. */
export function leadFilters(query: Pick<LeadListQuery, 'pageId' | 'startDate' | 'endDate'>): LeadFilters {
  const start = query.startDate === undefined ? undefined : instant(query.startDate, '/startDate');
  const end = query.endDate === undefined ? undefined : instant(query.endDate, '/endDate');
  if (start !== undefined && end !== undefined && start > end) throw invalidField('/startDate', 'is after endDate');
  return { pageId: query.pageId, start, end };
}

/** The tenant's leads matching the filters (served by the leads' indexes in list order). */
export function matchingLeads(db: Kysely<Database>, tenantId: string, filters: LeadFilters) {
  return db
    .selectFrom('leads')
    .where('leads.tenant_id', '=', tenantId)
    .$call((q) => (filters.pageId === undefined ? q : q.where('leads.page_id', '=', filters.pageId)))
    .$call((q) => (filters.start === undefined ? q : q.where('leads.created_at', '>=', filters.start)))
    .$call((q) => (filters.end === undefined ? q : q.where('leads.created_at', '<', filters.end)));
}

/** Each lead with its person, page, audience and session (what is gone reads as null or ''). */
export function withDetails(matching: ReturnType<typeof matchingLeads>) {
  return matching
    .innerJoin('persons as per', (j) => j.onRef('per.id', '=', 'leads.person_id').onRef('per.tenant_id', '=', 'leads.tenant_id'))
    .leftJoin('pages as pg', (j) => j.onRef('pg.id', '=', 'leads.page_id').onRef('pg.tenant_id', '=', 'leads.tenant_id'))
    .leftJoin('audiences as au', (j) => j.onRef('au.id', '=', 'leads.audience_id').onRef('au.tenant_id', '=', 'leads.tenant_id'))
    .leftJoin('audience_sessions as s', (j) => j.onRef('s.id', '=', 'leads.session_id').onRef('s.tenant_id', '=', 'leads.tenant_id'))
    .selectAll('leads')
    .select([
      'per.name as person_name',
      'per.email as person_email',
      'per.phone_number as person_phone',
      'pg.name as page_name',
      'pg.deleted_at as page_deleted_at',
      'au.effective_name as audience_name',
      's.channel',
      's.channel_group',
      's.referrer_host',
      's.utm_source',
      's.utm_medium',
      's.utm_campaign',
      's.utm_term',
      's.utm_content',
    ]);
}

type LeadRow = LeadsTable & {
  person_name: string;
  person_email: string | null;
  person_phone: string | null;
  page_name: string | null;
  page_deleted_at: string | null;
  audience_name: string | null;
  channel: string | null;
  channel_group: string | null;
  referrer_host: string | null;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  utm_term: string | null;
  utm_content: string | null;
};

export const toLead = (row: LeadRow): Lead => ({
  leadId: row.id,
  submittedAt: row.created_at,
  personId: row.person_id,
  personName: row.person_name,
  personEmail: row.person_email,
  personPhoneNumber: row.person_phone,
  pageId: row.page_id,
  pageName: row.page_deleted_at === null ? row.page_name : null,
  audienceId: row.audience_id,
  audienceName: row.audience_name,
  actionId: row.action_id,
  audienceSessionId: row.session_id,
  channel: row.channel ?? '',
  channelGroup: row.channel_group ?? '',
  referrerHost: row.referrer_host ?? '',
  utmSource: row.utm_source ?? '',
  utmMedium: row.utm_medium ?? '',
  utmCampaign: row.utm_campaign ?? '',
  utmTerm: row.utm_term ?? '',
  utmContent: row.utm_content ?? '',
  viaPersonId: row.via_person_id,
  submittedName: row.submitted_name,
  submittedEmail: row.submitted_email,
  submittedPhone: row.submitted_phone,
});

const leadsList = keysetList({ name: 'leads', table: 'leads', ...NEWEST_FIRST });

/** Newest first. */
export async function listLeads(db: Kysely<Database>, tenantId: string, query: LeadListQuery) {
  const filters = leadFilters(query);
  const matching = matchingLeads(db, tenantId, filters);
  return leadsList.read({ query, filters, rows: withDetails(matching), count: () => countRows(matching), map: toLead });
}

/** Which of these leads came with the visitor's Global Privacy Control. */
export async function leadsSentWithGpc(db: Kysely<Database>, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  return (await db.selectFrom('leads').select('id').where('id', 'in', ids).where('gpc', '=', 1).execute()).map((r) => r.id);
}
