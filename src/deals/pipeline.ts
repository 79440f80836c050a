import { sql, type Kysely } from 'kysely';
import { resolveRange, DAY_MS } from '../analytics/ranges.js';
import { isPostgres } from '../db/adapter.js';
import { CACHES, countedCache } from '../db/caches.js';
import type { Database } from '../db/types.js';
import { invalidField } from '../http/errors.js';
import {
  type CurrencySums,
  DEFAULT_WINDOW_DAYS,
  type Pipeline,
  type PipelineGroup,
  type PipelineGroupBy,
  type PipelineModel,
  type PipelineQuery,
  type PipelineTotals,
} from './pipeline-schemas.js';

/**
 * The influenced pipeline (docs/analytics.md, "Influenced pipeline"). A deal is touched by a
 * session when the session's person belongs to the deal's account (the person of the session's
 * audience, or of a lead sent in that session; a person belongs to the account of its domain) and
 * the session started in [createdAt − windowDays, createdAt]. Each path is one grouped statement
 * served by an index walk (audience → sessions by start; person → leads → session by id); the
 * models and the sums per currency are made here from (deal, group, first touch, last touch).
 */

interface Touch {
  deal: string;
  key: string;
  first: string;
  last: string;
}
interface DealSums {
  cents: number;
  currency: string;
  won: boolean;
}

interface Ask {
  db: Kysely<Database>;
  tenantId: string;
  start: string;
  end: string;
  model: PipelineModel;
  windowDays: number;
  groupBy: PipelineGroupBy;
  experimentId: string | null;
}

export async function pipelineReport(db: Kysely<Database>, tenantId: string, query: PipelineQuery): Promise<Pipeline> {
  const nextMidnight = Math.floor(Date.now() / DAY_MS) * DAY_MS + DAY_MS;
  const range = resolveRange(query, nextMidnight, 'UTC');
  const groupBy = query.groupBy ?? 'page';
  const experimentId = query.experimentId ?? null;
  if (groupBy === 'arm' && experimentId === null) throw invalidField('/experimentId', 'is required with groupBy=arm');
  if (groupBy !== 'arm' && experimentId !== null) throw invalidField('/experimentId', 'is only taken with groupBy=arm');
  if (experimentId !== null) {
    const found = await db
      .selectFrom('experiments')
      .select('id')
      .where('id', '=', experimentId)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
    if (!found) throw invalidField('/experimentId', 'is not an experiment of this tenant');
  }
  const ask: Ask = {
    db,
    tenantId,
    start: new Date(range.start).toISOString(),
    end: new Date(range.end).toISOString(),
    model: query.model ?? 'any',
    windowDays: query.windowDays ?? DEFAULT_WINDOW_DAYS,
    groupBy,
    experimentId,
  };
  const key = [ask.start, ask.end, ask.model, ask.windowDays, groupBy, experimentId ?? ''].join(' ');
  return answers(db, tenantId, key, ask);
}

/**
 * Answers kept per tenant, query and the three counters a touch depends on: sessions (visits and
 * leads), the tenant's change sequence (persons, accounts, audiences, pages) and its deals; 10 s
 * at most. docs/contributing.md lists it.
 */
const answers = countedCache(CACHES.pipeline, compute);

const GROUP_COLUMN: Record<PipelineGroupBy, 's.page_id' | 's.audience_id' | 's.experiment_arm'> = {
  page: 's.page_id',
  audience: 's.audience_id',
  arm: 's.experiment_arm',
  // A segment is an audience of rules (branch i39-segments): until `audiences.rules` exists, every audience.
  segment: 's.audience_id',
};

function touchesVia(ask: Ask, path: 'audience' | 'lead') {
  const { db, tenantId } = ask;
  const days = sql.lit(ask.windowDays);
  const windowStart = isPostgres(db)
    ? sql<string>`d.created_at - ${days} * interval '1 day'`
    : sql<string>`strftime('%Y-%m-%dT%H:%M:%fZ', d.created_at, '-' || ${days} || ' days')`;
  const column = GROUP_COLUMN[ask.groupBy];
  const persons = db
    .selectFrom('deals as d')
    .innerJoin('accounts as a', (j) => j.onRef('a.id', '=', 'd.account_id').onRef('a.tenant_id', '=', 'd.tenant_id'))
    .innerJoin('persons as p', (j) => j.onRef('p.tenant_id', '=', 'a.tenant_id').onRef('p.domain_lc', '=', 'a.domain_lc'))
    .where('d.tenant_id', '=', tenantId)
    .where('d.created_at', '>=', ask.start)
    .where('d.created_at', '<', ask.end);
  const viaAudience = persons
    .innerJoin('audiences as au', (j) => j.onRef('au.person_id', '=', 'p.id').onRef('au.tenant_id', '=', 'p.tenant_id'))
    .innerJoin('audience_sessions as s', 's.audience_id', 'au.id');
  // The rest reads the deal and the session only, which both paths name alike.
  const sessions =
    path === 'audience'
      ? viaAudience
      : (persons
          .innerJoin('leads as l', (j) => j.onRef('l.person_id', '=', 'p.id').onRef('l.tenant_id', '=', 'p.tenant_id'))
          .innerJoin('audience_sessions as s', 's.id', 'l.session_id') as unknown as typeof viaAudience);
  return sessions
    .whereRef('s.session_started_at', '<=', 'd.created_at')
    .where('s.session_started_at', '>=', windowStart)
    .$call((q) => (ask.experimentId === null ? q : q.where('s.experiment_id', '=', ask.experimentId)))
    .select([
      'd.id as deal',
      sql<string>`${sql.ref(column)}`.as('key'),
      (eb) => eb.fn.min('s.session_started_at').as('first'),
      (eb) => eb.fn.max('s.session_started_at').as('last'),
    ])
    .groupBy(['d.id', column])
    .execute() as Promise<Touch[]>;
}

/** The deals credited to each group: every touched group (`any`), or the group of the earliest or latest touch. */
function credit(model: PipelineModel, touches: Touch[]): Map<string, Set<string>> {
  const byDeal = new Map<string, Map<string, Touch>>();
  for (const t of touches) {
    const at = String(t.first);
    const last = String(t.last);
    const keys = byDeal.get(t.deal) ?? new Map<string, Touch>();
    byDeal.set(t.deal, keys);
    const seen = keys.get(t.key);
    // The two paths may reach one session: keep the widest span per group.
    if (!seen) keys.set(t.key, { ...t, first: at, last });
    else {
      // ISO instants: string order is time order.
      if (at < seen.first) seen.first = at;
      if (last > seen.last) seen.last = last;
    }
  }
  const groups = new Map<string, Set<string>>();
  const give = (key: string, deal: string) => groups.set(key, (groups.get(key) ?? new Set()).add(deal));
  for (const [deal, keys] of byDeal) {
    const all = [...keys.values()].sort((x, y) => (x.key < y.key ? -1 : 1));
    if (model === 'any') for (const t of all) give(t.key, deal);
    else {
      // Ties go to the smallest key, so the answer does not depend on the statements' order.
      let chosen = all[0] as Touch;
      for (const t of all) {
        if (model === 'first' ? t.first < chosen.first : t.last > chosen.last) chosen = t;
      }
      give(chosen.key, deal);
    }
  }
  return groups;
}

function sums(dealIds: Iterable<string>, deals: Map<string, DealSums>): PipelineTotals {
  const byCurrency = new Map<string, { deals: number; cents: number; wonDeals: number; wonCents: number }>();
  let count = 0;
  let won = 0;
  for (const id of dealIds) {
    const d = deals.get(id);
    if (!d) continue;
    const c = byCurrency.get(d.currency) ?? { deals: 0, cents: 0, wonDeals: 0, wonCents: 0 };
    byCurrency.set(d.currency, c);
    c.deals += 1;
    c.cents += d.cents;
    count += 1;
    if (d.won) {
      c.wonDeals += 1;
      c.wonCents += d.cents;
      won += 1;
    }
  }
  const list: CurrencySums[] = [...byCurrency.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([currency, c]) => ({ currency, deals: c.deals, amount: c.cents / 100, wonDeals: c.wonDeals, wonAmount: c.wonCents / 100 }));
  const one = list.length <= 1 ? list[0] : undefined;
  const several = list.length > 1;
  return {
    deals: count,
    amount: several ? null : (one?.amount ?? 0),
    wonDeals: won,
    wonAmount: several ? null : (one?.wonAmount ?? 0),
    byCurrency: list,
  };
}

async function labels(ask: Ask, keys: string[]): Promise<Map<string, string>> {
  if (keys.length === 0 || ask.groupBy === 'arm') return new Map(keys.map((k) => [k, k]));
  const rows =
    ask.groupBy === 'page'
      ? await ask.db
          .selectFrom('pages')
          .select(['id', 'name as label'])
          .where('tenant_id', '=', ask.tenantId)
          .where('id', 'in', keys)
          .execute()
      : await ask.db
          .selectFrom('audiences')
          .select(['id', 'effective_name as label'])
          .where('tenant_id', '=', ask.tenantId)
          .where('id', 'in', keys)
          .execute();
  return new Map(rows.map((r) => [r.id, r.label]));
}

async function compute(ask: Ask): Promise<Pipeline> {
  const [viaAudiences, viaLeads] = await Promise.all([touchesVia(ask, 'audience'), touchesVia(ask, 'lead')]);
  const touches = [...viaAudiences, ...viaLeads].filter((t) => t.key !== null);
  const credited = credit(ask.model, touches);
  const dealIds = [...new Set(touches.map((t) => t.deal))];
  const deals = new Map<string, DealSums>();
  // Chunks keep each statement's parameters well under SQLite's and PostgreSQL's limits.
  for (let i = 0; i < dealIds.length; i += 5000) {
    const rows = await ask.db
      .selectFrom('deals')
      .select(['id', 'amount_cents', 'currency', 'stage'])
      .where('tenant_id', '=', ask.tenantId)
      .where('id', 'in', dealIds.slice(i, i + 5000))
      .execute();
    for (const r of rows) deals.set(r.id, { cents: Number(r.amount_cents), currency: r.currency, won: r.stage === 'won' });
  }
  const named = await labels(ask, [...credited.keys()]);
  const groups: PipelineGroup[] = [...credited.entries()]
    .map(([key, ids]) => ({ key, label: named.get(key) ?? key, ...sums(ids, deals) }))
    .sort((a, b) => b.deals - a.deals || b.wonDeals - a.wonDeals || (a.key < b.key ? -1 : 1));
  const totals = sums(dealIds, deals);
  const only = totals.byCurrency.length === 1 ? (totals.byCurrency[0]?.currency ?? null) : null;
  return {
    startDate: ask.start,
    endDate: ask.end,
    model: ask.model,
    windowDays: ask.windowDays,
    groupBy: ask.groupBy,
    experimentId: ask.experimentId,
    currency: only,
    totals,
    groups,
  };
}
