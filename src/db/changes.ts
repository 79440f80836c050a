import { type Expression, type RawBuilder, sql, type Kysely } from 'kysely';
import { isPostgres } from './adapter.js';
import { batchedReads } from './batch.js';
import type { ChangeFeed } from './change-feed.js';
import { perDatabase } from './per-database.js';
import { prepared } from './prepared.js';
import type { Database } from './types.js';

/**
 * What an in-process cache watches instead of being told: a counter per kind of change, moved by
 * the data function that makes the change, in its transaction, so the counter and the change
 * commit together (or not at all) and no route can forget it. A cache keeps an answer while the
 * counter it read before reading the answer stands still. The catalogue of caches and what moves
 * each is in docs/contributing.md ("In-process caches").
 *
 * - `domains`: which hosts are tenant domains (a domain verified, released or deleted; a tenant's
 *   fallback domain made);
 * - `sessions:<tenantId>`: what the tenant's pages overview adds up (a session's sums changed, a
 *   page deleted);
 * - `site:<tenantId>`: the tenant's change sequence (issue 31), everything a visitor or a kept API
 *   answer could see: pages, audiences, versions, links, domains, files, persons and accounts a
 *   page shows, experiments, API keys. Moved by triggers on those tables, in the writing
 *   transaction, whoever writes (migration 2026_11_27_0024_tenant_changes); a change stored
 *   elsewhere (site settings) adds its table's trigger there, or calls noteSiteChange;
 * - `deals:<tenantId>`: the tenant's deals (one upserted with a change, or deleted: src/deals/).
 */
export type ChangeScope = 'domains' | `sessions:${string}` | `site:${string}` | `deals:${string}`;

const moveCounter = prepared((db, p: { scope: string }) =>
  db.updateTable('change_counters').set({ value: sql<number>`value + 1` }).where('scope', '=', p.scope).returning('value'),
);
const startCounter = prepared((db, p: { scope: string }) =>
  db
    .insertInto('change_counters')
    .values({ scope: p.scope, value: 1 })
    .onConflict((oc) => oc.column('scope').doUpdateSet({ value: sql<number>`change_counters.value + 1` })),
);
/** A sharded counter's rows after its first, `<name>#1` … `#7` (also the tenant counts' in db/counters.ts). */
export const SHARD_SUFFIXES = ['#1', '#2', '#3', '#4', '#5', '#6', '#7'];

/**
 * The rows a counter is kept in, as SQL over `scope` (a text expression naming it). On PostgreSQL
 * each connection moves a tenant's change sequence in the row of its own shard, `<scope>` or
 * `<scope>#1` … `#7` (migration 0063), so that concurrent writers of one tenant do not commit one
 * after another on one row's lock; the counter is the sum of its rows, read in one statement.
 * Every other counter, and every counter on SQLite, has its first row only: its sum is its value.
 */
export const counterRows = (scope: Expression<string> | RawBuilder<string>) =>
  sql.join([scope, ...SHARD_SUFFIXES.map((suffix) => sql`${scope} || ${sql.lit(suffix)}`)]);

const readCounter = prepared((db, p: { scope: string }) => ({
  compile: () =>
    sql<{ value: number | string | null }>`
      select sum(c.value) as value from change_counters c where c.scope in (${counterRows(sql<string>`${p.scope}`)})`.compile(db),
}));

/**
 * When this process last moved a counter of each kind (`domains`, `sessions`) of a database
 * (Date.now()): by kind, not by scope, so it holds a few entries whatever the number of tenants.
 */
const movedHere = perDatabase(() => new Map<string, number>());
const kindOf = (scope: ChangeScope) => scope.split(':', 1)[0] ?? scope;

/**
 * Moves `scope`'s counter in the caller's transaction. Every transaction that moves one counter
 * takes its row lock (PostgreSQL) until it ends: call it before the other rows the change writes
 * that transactions of the same scope share (a page's rollup rows), so two never wait in a cycle.
 */
export async function noteChange(trx: Kysely<Database>, scope: ChangeScope): Promise<void> {
  movedHere(trx).set(kindOf(scope), Date.now());
  // A plain UPDATE of the existing row costs a fraction of an upsert on SQLite; the row is made once.
  if ((await moveCounter(trx, { scope })).length === 0) await startCounter(trx, { scope });
}

/** `scope`'s counter as committed: 0 before its first change. */
export async function changeCount(db: Kysely<Database>, scope: ChangeScope): Promise<number> {
  return Number((await readCount(db, scope))?.value ?? 0);
}

/**
 * A kept answer reads its counters before every answer (caches.ts `countedCache`): on PostgreSQL
 * the counters that concurrent requests ask share one statement (db/batch.ts), as reads by id do.
 */
const readCount = batchedReads({
  id: (scope: string) => scope,
  rowId: (row: { scope: string; value: number | string | null }) => row.scope,
  one: async (db, scope) => ({ scope, value: (await readCounter(db, { scope }))[0]?.value ?? null }),
  many: (db, scopes) => readCounters(db, { scopes }),
});

const readCounters = prepared((db, p: { scopes: string[] }) => ({
  compile: () =>
    sql<{ scope: string; value: number | string | null }>`
      select k.scope, sum(c.value) as value
      from unnest(cast(${p.scopes} as text[])) as k(scope)
      left join change_counters c on c.scope in (${counterRows(sql<string>`k.scope`)})
      group by k.scope`.compile(db),
}));

/**
 * When this process last moved a counter of `scope`'s kind in `db` (-Infinity: never). That change
 * may still be committing: a cache that reads its counter only now and then reads it every time
 * for a while after this, so that what this process changed shows here at once.
 */
export function movedHereAt(db: Kysely<Database>, scope: ChangeScope): number {
  return movedHere(db).get(kindOf(scope)) ?? Number.NEGATIVE_INFINITY;
}

/**
 * Moves the tenant's change sequence (`site:<tenantId>`) in the caller's transaction, for a change
 * a visitor or a kept API answer could see that no trigger of the sequence covers (twice is
 * harmless). The served-document memo and the API key cache trust what they hold only while the
 * sequence stands still (docs/contributing.md, "In-process caches").
 */
export async function noteSiteChange(trx: Kysely<Database>, tenantId: string): Promise<void> {
  if (isPostgres(trx)) await moveWithWriter(trx, { scope: `site:${tenantId}` });
  else await noteChange(trx, `site:${tenantId}`);
}

/**
 * As the sequence's triggers do on PostgreSQL (migration 0071): the row records its writer's
 * transaction, which is how the change feed hears of the move (db/change-feed.ts).
 */
const moveWithWriter = prepared((db, p: { scope: string }) => ({
  compile: () =>
    sql`
      insert into change_counters (scope, value, writer) values (${p.scope}, 1, pg_current_xact_id())
      on conflict (scope) do update set value = change_counters.value + 1, writer = excluded.writer`.compile(db),
}));

/** The tenant's change sequence as committed: 0 before its first change. */
export const siteSequence = (db: Kysely<Database>, tenantId: string): Promise<number> => changeCount(db, `site:${tenantId}`);

/**
 * A counter at SQLite's `dataVersion`, read once per scope for each committed state: after a
 * commit anywhere, the first request that needs a scope reads it (a tenant's first segmented page,
 * site/serve/choose.ts; a kept answer's key, caches.ts `countedCache`), and the requests that
 * arrive meanwhile wait for that read. Dropped whole when the state moves, and at most
 * SCOPES_AT_ONCE scopes are held.
 */
const countsAt = perDatabase(() => ({ at: -1, byScope: new Map<string, Promise<number>>() }));
const SCOPES_AT_ONCE = 1000;
export function changeCountAt(db: Kysely<Database>, scope: ChangeScope, dataVersion: number): Promise<number> {
  const held = countsAt(db);
  if (held.at !== dataVersion || held.byScope.size >= SCOPES_AT_ONCE) {
    held.at = dataVersion;
    held.byScope.clear();
  }
  let count = held.byScope.get(scope);
  if (!count) {
    // Read in this turn's snapshot, the one `dataVersion` names.
    count = changeCount(db, scope);
    held.byScope.set(scope, count);
    count.catch(() => held.byScope.delete(scope));
  }
  return count;
}

/** The tenant's change sequence at SQLite's `dataVersion` (`changeCountAt`). */
export const siteSequenceAt = (db: Kysely<Database>, tenantId: string, dataVersion: number): Promise<number> =>
  changeCountAt(db, `site:${tenantId}`, dataVersion);

/** What tells a kept answer from an old one without a counter's read: SQLite's `data_version`, or PostgreSQL's change feed. */
export interface Freshness {
  dataVersion?: (() => number) | undefined;
  feed?: ChangeFeed | undefined;
}

/**
 * The tenant's change sequence as PostgreSQL's change feed vouches for it (db/change-feed.ts): read
 * once, then trusted while the feed has heard of no change of the tenant since the mark taken
 * before the read, once a sync has shown every change committed before this call received. Every
 * move of the sequence records its writer (its triggers, and noteSiteChange), which the feed reads,
 * so a kept count that is not the committed one is never answered. The sync is one statement
 * shared by the requests that wait together: under load, a fraction of a statement a request.
 * When the feed cannot tell, it reads.
 */
const fedCounts = perDatabase(() => new Map<string, { count: Promise<number>; mark: ReturnType<ChangeFeed['mark']> }>());
const TENANTS_FED = 10_000;
export async function siteSequenceFed(db: Kysely<Database>, feed: ChangeFeed, tenantId: string): Promise<number> {
  const synced = await feed.sync();
  const kept = fedCounts(db);
  const known = kept.get(tenantId);
  // A read still under way is shared too: it began after its mark, and nothing changed since.
  if (synced && known && !feed.changedSince(tenantId, known.mark)) return known.count;
  const mark = feed.mark();
  const count = siteSequence(db, tenantId);
  if (synced) {
    if (kept.size >= TENANTS_FED) kept.clear();
    const entry = { count, mark };
    kept.set(tenantId, entry);
    count.catch(() => {
      if (kept.get(tenantId) === entry) kept.delete(tenantId);
    });
  }
  return count;
}
