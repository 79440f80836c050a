import type { Kysely } from 'kysely';
import { noteChange } from '../../src/db/changes.js';
import type { Database } from '../../src/db/types.js';
import { newId } from '../../src/ids.js';
import { NOT_COLLECTED } from '../../src/visits/repository.js';
import { newAudience, newPage } from '../analytics/helpers.js';
import type { TestApp } from '../helpers.js';

/**
 * Issue 45's probe of the influenced pipeline, seeded in bulk: `persons` persons of one account's
 * domain, each with an audience (on one of `pages` pages) and one session, and a lead sent in that
 * session (so both paths reach it), and `deals` deals on that account, each created after every
 * session. Every deal is touched by every session: the report's worst case for its size.
 */
export interface LoadShape {
  domain: string;
  persons: number;
  deals: number;
  pages?: number;
  /** The first session's instant; session i starts i seconds later. Deal i follows 30 days and i seconds on. */
  start: number;
}

const DAY = 86_400_000;

async function insertAll(db: Kysely<Database>, table: keyof Database, rows: Record<string, unknown>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 20_000) {
    await db.transaction().execute(async (trx) => {
      for (let j = i; j < Math.min(i + 20_000, rows.length); j += 200) {
        // Rows are built to the table's shape below; Kysely's per-table insert type is too narrow to name here.
        await trx
          .insertInto(table)
          .values(rows.slice(j, j + 200) as never)
          .execute();
      }
    });
  }
}

/** The range that holds every deal of the shape. */
export const dealRange = (shape: LoadShape) => ({
  startDate: new Date(shape.start + 30 * DAY).toISOString(),
  endDate: new Date(shape.start + 32 * DAY).toISOString(),
});

export async function seedLoad(t: TestApp, shape: LoadShape): Promise<{ pages: string[] }> {
  const db = t.app.db as Kysely<Database>;
  const tenantId = t.tenantId;
  const pageCount = shape.pages ?? 20;
  const pages: string[] = [];
  const templates: Record<string, unknown>[] = [];
  for (let i = 0; i < pageCount; i++) {
    const pageId = await newPage(t, `Load ${shape.domain} ${i}`);
    const audienceId = await newAudience(t, pageId);
    pages.push(pageId);
    templates.push(await db.selectFrom('audiences').selectAll().where('id', '=', audienceId).executeTakeFirstOrThrow());
  }
  const at = new Date(shape.start).toISOString();
  await insertAll(db, 'accounts', [
    {
      id: newId('account'),
      tenant_id: tenantId,
      name: shape.domain,
      name_lc: shape.domain,
      domain: shape.domain,
      domain_lc: shape.domain,
      created_at: at,
      updated_at: at,
      latest_activity_at: at,
    },
  ]);
  const persons: Record<string, unknown>[] = [];
  const audiences: Record<string, unknown>[] = [];
  const sessions: Record<string, unknown>[] = [];
  const leads: Record<string, unknown>[] = [];
  for (let i = 0; i < shape.persons; i++) {
    const personId = newId('person');
    persons.push({
      id: personId,
      tenant_id: tenantId,
      name: `Person ${i}`,
      email: `p${i}@${shape.domain}`,
      domain: shape.domain,
      domain_lc: shape.domain,
      slug: `load-${shape.domain}-${i}`,
      phone_number: null,
      linkedin_profile_url: null,
      created_at: at,
      updated_at: at,
    });
    const template = templates[i % pageCount] as Record<string, unknown>;
    const audienceId = newId('audience');
    audiences.push({ ...template, id: audienceId, person_id: personId, number: 1000 + i, computed_name: `Person ${i}` });
    const started = new Date(shape.start + i * 1000).toISOString();
    const sessionId = newId('session');
    sessions.push({
      id: sessionId,
      tenant_id: tenantId,
      page_id: template.page_id,
      audience_id: audienceId,
      analytics_session_id: sessionId,
      page_title: 'Load',
      page_url: 'https://example.com/',
      session_started_at: started,
      session_ended_at: started,
      time_spent_seconds: 1,
      max_scroll_depth_percentage: 0,
      total_clicks_count: 0,
      questions_asked_count: 0,
      is_bounce: 0,
      has_form_submit: 1,
      has_conversion: 0,
      form_submission_id: '',
      form_submission_identifier: '',
      form_submission_email: '',
      form_submission_phone: '',
      utm_campaign: '',
      utm_content: '',
      utm_medium: '',
      utm_source: '',
      utm_term: '',
      created_at: started,
      visit_id: null,
      experiment_id: null,
      experiment_arm: null,
      experiment_unit: null,
      ...NOT_COLLECTED,
    });
    leads.push({
      id: newId('submission'),
      tenant_id: tenantId,
      page_id: template.page_id,
      audience_id: audienceId,
      session_id: sessionId,
      person_id: personId,
      action_id: 'action_load',
      created_at: started,
      submitted_name: `Person ${i}`,
      submitted_email: `p${i}@${shape.domain}`,
      submitted_phone: '',
      via_person_id: null,
      gpc: 0,
    });
  }
  await insertAll(db, 'persons', persons);
  await insertAll(db, 'audiences', audiences);
  await insertAll(db, 'audience_sessions', sessions);
  await insertAll(db, 'leads', leads);
  await addDeals(t, shape, 0, shape.deals, shape.domain);
  return { pages };
}

/**
 * Deals `from` to `from + count - 1` of the shape, deal i created 30 days and i seconds after the
 * first session; on the shape's account, or on none (`domain` null: counted in the range, never
 * influenced).
 */
export async function addDeals(t: TestApp, shape: LoadShape, from: number, count: number, domain: string | null): Promise<void> {
  const db = t.app.db as Kysely<Database>;
  const account =
    domain === null ? undefined : await db.selectFrom('accounts').select('id').where('domain_lc', '=', domain).executeTakeFirst();
  const deals: Record<string, unknown>[] = [];
  for (let i = from; i < from + count; i++) {
    const created = new Date(shape.start + 30 * DAY + i * 1000).toISOString();
    const stage = i % 4 === 0 ? 'won' : 'open';
    deals.push({
      id: newId('deal'),
      tenant_id: t.tenantId,
      source: 'api',
      external_id: `load-${shape.domain}-${i}`,
      name: `Deal ${i}`,
      amount_cents: 100 * (1 + (i % 7)),
      currency: 'EUR',
      stage,
      account_id: account?.id ?? null,
      account_domain: domain,
      created_at: created,
      closed_at: stage === 'won' ? created : null,
      recorded_at: created,
      updated_at: created,
    });
  }
  await insertAll(db, 'deals', deals);
  // Written past the deals' own functions: the kept reports learn of them as of any deal's change.
  await db.transaction().execute((trx) => noteChange(trx, `deals:${t.tenantId}`));
}
