import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../db/adapter.js';
import { CACHES, countedCache } from '../db/caches.js';
import type { Database } from '../db/types.js';
import { MAX_WINDOW_DAYS, type PipelineGroupBy } from './pipeline-schemas.js';

/**
 * Every touch the deals of a range could have, read once for every model and window: the sessions
 * that started at most MAX_WINDOW_DAYS before a deal's createdAt, through the deal's account, its
 * persons (a person belongs to the account of its domain), and either their audiences' sessions or
 * the sessions their leads were sent in. A window and a model are then a pass over these in memory
 * (pipeline.ts), so a dashboard's nine views of one range cost one read of the database.
 */
export interface Touches {
  /** The deals with at least one touch: createdAt (ms) and what the sums need. */
  deals: { id: string; created: number; cents: number; currency: string; won: boolean; known: boolean }[];
  /** The groups touched (a page, audience, segment or arm) and their labels. */
  keys: string[];
  labels: string[];
  /** Touch j: its deal (index into `deals`), its group (index into `keys`), when its session started (ms). */
  deal: Int32Array;
  key: Int32Array;
  at: Float64Array;
  /** What the entry keeps, for the cache's bound. */
  bytes: number;
}

export interface TouchAsk {
  db: Kysely<Database>;
  tenantId: string;
  start: string;
  end: string;
  groupBy: PipelineGroupBy;
  experimentId: string | null;
}

/**
 * Kept per tenant, range, grouping and experiment under the three counters a touch depends on:
 * sessions (visits and leads), the tenant's change sequence (persons, accounts, audiences, pages)
 * and its deals. docs/contributing.md lists it.
 */
const kept = countedCache(CACHES.pipelineTouches, readTouches);

export function touchesOf(ask: TouchAsk): Promise<Touches> {
  const key = [ask.start, ask.end, ask.groupBy, ask.experimentId ?? ''].join(' ');
  return kept(ask.db, ask.tenantId, key, ask);
}

const GROUP_COLUMN: Record<PipelineGroupBy, 's.page_id' | 's.audience_id' | 's.experiment_arm'> = {
  page: 's.page_id',
  audience: 's.audience_id',
  arm: 's.experiment_arm',
  segment: 's.audience_id',
};

interface Row {
  deal: string;
  created: string;
  key: string | null;
  started: string;
}

/**
 * One path's touches. Each is an index walk from the range's deals (deals by tenant and createdAt →
 * account by id → persons by domain → audiences by person or leads by person → sessions by audience
 * and start, or by id). The joins are written as CROSS JOINs with their conditions in WHERE: SQLite
 * keeps that order, where without statistics it would start from every audience of the tenant;
 * PostgreSQL plans them as the inner joins they are.
 */
function touchesVia(ask: TouchAsk, path: 'audience' | 'lead'): Promise<Row[]> {
  const { db, tenantId } = ask;
  const days = sql.lit(MAX_WINDOW_DAYS);
  const windowStart = isPostgres(db)
    ? sql<string>`d.created_at - ${days} * interval '1 day'`
    : sql<string>`strftime('%Y-%m-%dT%H:%M:%fZ', d.created_at, '-' || ${days} || ' days')`;
  const column = GROUP_COLUMN[ask.groupBy];
  const persons = db
    .selectFrom('deals as d')
    .crossJoin('accounts as a')
    .crossJoin('persons as p')
    .where('d.tenant_id', '=', tenantId)
    .where('d.created_at', '>=', ask.start)
    .where('d.created_at', '<', ask.end)
    .whereRef('a.id', '=', 'd.account_id')
    .whereRef('a.tenant_id', '=', 'd.tenant_id')
    .whereRef('p.tenant_id', '=', 'a.tenant_id')
    .whereRef('p.domain_lc', '=', 'a.domain_lc');
  const viaAudience = persons
    .crossJoin('audiences as au')
    .crossJoin('audience_sessions as s')
    .whereRef('au.person_id', '=', 'p.id')
    .whereRef('au.tenant_id', '=', 'p.tenant_id')
    .whereRef('s.audience_id', '=', 'au.id');
  // The rest reads the deal and the session only, which both paths name alike.
  const sessions =
    path === 'audience'
      ? viaAudience
      : (persons
          .crossJoin('leads as l')
          .crossJoin('audience_sessions as s')
          .whereRef('l.person_id', '=', 'p.id')
          .whereRef('l.tenant_id', '=', 'p.tenant_id')
          .whereRef('s.id', '=', 'l.session_id') as unknown as typeof viaAudience);
  return (
    sessions
      .whereRef('s.session_started_at', '<=', 'd.created_at')
      .where('s.session_started_at', '>=', windowStart)
      .$call((q) => (ask.experimentId === null ? q : q.where('s.experiment_id', '=', ask.experimentId)))
      // A segment is an audience of rules: a visit matched to one (never a person's own audience).
      .$call((q) =>
        ask.groupBy === 'segment'
          ? q.where(({ exists, selectFrom }) =>
              exists(
                selectFrom('audiences as seg').select('seg.id').whereRef('seg.id', '=', 's.audience_id').where('seg.rules', 'is not', null),
              ),
            )
          : q,
      )
      .select([
        'd.id as deal',
        'd.created_at as created',
        sql<string | null>`${sql.ref(column)}`.as('key'),
        's.session_started_at as started',
      ])
      .execute() as Promise<Row[]>
  );
}

async function labelsOf(ask: TouchAsk, keys: string[]): Promise<Map<string, string>> {
  if (keys.length === 0 || ask.groupBy === 'arm') return new Map(keys.map((k) => [k, k]));
  const named = new Map<string, string>();
  // Chunks keep each statement's parameters well under SQLite's and PostgreSQL's limits.
  for (let i = 0; i < keys.length; i += 5000) {
    const chunk = keys.slice(i, i + 5000);
    const rows =
      ask.groupBy === 'page'
        ? await ask.db
            .selectFrom('pages')
            .select(['id', 'name as label'])
            .where('tenant_id', '=', ask.tenantId)
            .where('id', 'in', chunk)
            .execute()
        : await ask.db
            .selectFrom('audiences')
            .select(['id', 'effective_name as label'])
            .where('tenant_id', '=', ask.tenantId)
            .where('id', 'in', chunk)
            .execute();
    for (const r of rows) named.set(r.id, r.label);
  }
  return named;
}

async function readTouches(ask: TouchAsk): Promise<Touches> {
  // A person's own audience has no rules: by segment, only sessions a lead was sent in can touch.
  const paths = ask.groupBy === 'segment' ? (['lead'] as const) : (['audience', 'lead'] as const);
  const rows = (await Promise.all(paths.map((path) => touchesVia(ask, path)))).flat();
  const dealIndex = new Map<string, number>();
  const keyIndex = new Map<string, number>();
  const dealIds: string[] = [];
  const created: number[] = [];
  const keys: string[] = [];
  const deal = new Int32Array(rows.length);
  const key = new Int32Array(rows.length);
  const at = new Float64Array(rows.length);
  let n = 0;
  for (const r of rows) {
    if (r.key === null) continue;
    let d = dealIndex.get(r.deal);
    if (d === undefined) {
      d = dealIds.push(r.deal) - 1;
      dealIndex.set(r.deal, d);
      created.push(Date.parse(r.created));
    }
    let k = keyIndex.get(r.key);
    if (k === undefined) {
      k = keys.push(r.key) - 1;
      keyIndex.set(r.key, k);
    }
    deal[n] = d;
    key[n] = k;
    at[n] = Date.parse(r.started);
    n += 1;
  }
  const sums = new Map<string, { cents: number; currency: string; won: boolean }>();
  for (let i = 0; i < dealIds.length; i += 5000) {
    const found = await ask.db
      .selectFrom('deals')
      .select(['id', 'amount_cents', 'currency', 'stage'])
      .where('tenant_id', '=', ask.tenantId)
      .where('id', 'in', dealIds.slice(i, i + 5000))
      .execute();
    for (const r of found) sums.set(r.id, { cents: Number(r.amount_cents), currency: r.currency, won: r.stage === 'won' });
  }
  const named = await labelsOf(ask, keys);
  // A deal deleted since its touches were read has no sums: it is left out of them.
  const deals = dealIds.map((id, i) => {
    const found = sums.get(id);
    return { id, created: created[i] as number, known: found !== undefined, ...(found ?? { cents: 0, currency: '', won: false }) };
  });
  const labels = keys.map((k) => named.get(k) ?? k);
  const text = (list: string[]) => list.reduce((sum, s) => sum + 2 * s.length + 40, 0);
  return {
    deals,
    keys,
    labels,
    deal: deal.subarray(0, n),
    key: key.subarray(0, n),
    at: at.subarray(0, n),
    bytes: 1024 + n * 16 + deals.length * 200 + text(keys) + text(labels),
  };
}
