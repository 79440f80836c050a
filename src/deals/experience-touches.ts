import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { breathe } from './sliced-sort.js';
import { type Deals, iso, MAX_PIPELINE_SESSIONS, sizes, tooLarge, type TouchAsk } from './touch-reads.js';

/**
 * The experience views that touch deals (issue 48 §4): a view on the customer's own site has no
 * person, so it touches a deal only once the site said who the visitor is (`pam.identify(email)`,
 * a person the tenant knows): that day's views of that daily visitor then count for the person's
 * account, by its domain (docs/decisions.md, issue 48). One touch per experience, visitor and day,
 * at its first view; read in chunks of domains, as the sessions are.
 */
export interface ExperienceTouch {
  /** Time-ordered ties are broken by this, as sessions' are by their id. */
  id: string;
  experienceId: string;
  viewedAt: string;
  domain: string;
}

export async function experienceTouchesOf(
  db: Kysely<Database>,
  tenantId: string,
  domains: string[],
  from: string,
  to: string,
  limit: number,
): Promise<ExperienceTouch[]> {
  if (domains.length === 0) return [];
  const rows = await db
    .selectFrom('experience_units')
    .select(['experience_id', 'day', 'unit', 'viewed_at', 'account_domain'])
    .where('tenant_id', '=', tenantId)
    .where('account_domain', 'in', domains)
    .where('viewed_at', '>=', from)
    .where('viewed_at', '<=', to)
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    id: `experience:${r.experience_id}:${r.day}:${r.unit}`,
    experienceId: r.experience_id,
    viewedAt: typeof r.viewed_at === 'string' ? r.viewed_at : new Date(r.viewed_at).toISOString(),
    domain: r.account_domain as string,
  }));
}

/**
 * Adds the identified experience views of the deals' accounts to the touches (`touch`), each in
 * its account's deals' windows, keyed by experience id.
 */
export async function experienceTouches(
  ask: TouchAsk,
  deals: Deals,
  windowMs: number,
  touch: (account: number, at: number, key: string, id: string) => void,
): Promise<void> {
  const domains = [...deals.accounts.keys()];
  const { ids: idsPer } = sizes(ask.db);
  let read = 0;
  for (let i = 0; i < domains.length; i += idsPer) {
    const chunk = domains.slice(i, i + idsPer);
    let from = Number.POSITIVE_INFINITY;
    let to = Number.NEGATIVE_INFINITY;
    for (const d of chunk) {
      const a = deals.accounts.get(d) as number;
      from = Math.min(from, (deals.first[a] as number) - windowMs);
      to = Math.max(to, deals.last[a] as number);
    }
    await breathe();
    const rows = await experienceTouchesOf(ask.db, ask.tenantId, chunk, iso(from), iso(to), MAX_PIPELINE_SESSIONS - read + 1);
    read += rows.length;
    if (read > MAX_PIPELINE_SESSIONS) {
      throw tooLarge(`the deals' accounts have more than the ${MAX_PIPELINE_SESSIONS} experience views the report reads at once`);
    }
    for (const r of rows) {
      const a = deals.accounts.get(r.domain) as number;
      const viewed = Date.parse(r.viewedAt);
      if (viewed < (deals.first[a] as number) - windowMs || viewed > (deals.last[a] as number)) continue;
      touch(a, viewed, r.experienceId, r.id);
    }
  }
}
