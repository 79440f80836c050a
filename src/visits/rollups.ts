import { CompiledQuery, sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import { isPostgres } from '../db/adapter.js';
import { CACHES, newCache } from '../db/caches.js';
import { noteChange } from '../db/changes.js';
import { registerHot } from '../db/named-statements.js';
import { planOnce } from '../db/plan-once.js';
import { SESSION_COLUMNS } from '../db/session-columns.js';
import type { AudienceSessionsTable, Database, RollupSums } from '../db/types.js';
import { SESSION_SUMS, SOURCED_SUMS, SUM_COLUMNS, sessionSums, type SummedColumn, zeroSums } from './sums.js';

/** The UTC hour and day an instant (ISO 8601 in UTC, as stored) falls in, as their first instant. */
export const hourOf = (instant: string): string => `${instant.slice(0, 13)}:00:00.000Z`;
export const dayOf = (instant: string): string => `${instant.slice(0, 10)}T00:00:00.000Z`;

type Key = Record<string, string>;
type TableName = 'analytics_hours_utm' | 'analytics_days' | 'analytics_site_hours' | 'analytics_site_days';
interface RollupTable {
  name: TableName;
  /** The primary key's columns. */
  conflict: readonly string[];
  /** The rows a session adds to, each as its key (a column's order is the statements' order of parameters). */
  rows: (s: Pick<RolledSession, KeySource>) => Key[];
}

/**
 * The session columns the site's daily rows group by (migration 0027): every grouping the site
 * answer offers. `dimension` in `analytics_site_days` is the column's name.
 */
export const SITE_DIMENSIONS = SESSION_COLUMNS.dimensions;
export type SiteDimension = (typeof SITE_DIMENSIONS)[number];

/** The session columns that name a session's rows (the hour and day come from its start): the only ones `rows()` may read. */
const KEY_SOURCES = ['tenant_id', 'page_id', 'audience_id', 'session_started_at', ...SITE_DIMENSIONS] as const;
type KeySource = (typeof KEY_SOURCES)[number];

/** What of a session the rollups hold: where it belongs and what it adds up to. */
export type RolledSession = Pick<AudienceSessionsTable, KeySource | SummedColumn>;

// The page's hourly rows are keyed by every grouping too, in the same order.
const HOURS_UTM_KEY = ['page_id', 'hour', 'audience_id', ...SITE_DIMENSIONS] as const;

const TABLES: readonly RollupTable[] = [
  {
    name: 'analytics_hours_utm',
    conflict: HOURS_UTM_KEY,
    // The tenant rides along outside the primary key: matching it too is harmless.
    rows: (s) => [
      {
        page_id: s.page_id,
        hour: hourOf(s.session_started_at),
        audience_id: s.audience_id,
        ...Object.fromEntries(SITE_DIMENSIONS.map((dimension) => [dimension, s[dimension]])),
        tenant_id: s.tenant_id,
      },
    ],
  },
  {
    name: 'analytics_days',
    conflict: ['tenant_id', 'day', 'page_id'],
    rows: (s) => [{ tenant_id: s.tenant_id, day: dayOf(s.session_started_at), page_id: s.page_id }],
  },
  {
    name: 'analytics_site_hours',
    conflict: ['tenant_id', 'hour'],
    rows: (s) => [{ tenant_id: s.tenant_id, hour: hourOf(s.session_started_at) }],
  },
  {
    name: 'analytics_site_days',
    conflict: ['tenant_id', 'dimension', 'day', 'value'],
    rows: (s) =>
      SITE_DIMENSIONS.map((dimension) => ({ tenant_id: s.tenant_id, day: dayOf(s.session_started_at), dimension, value: s[dimension] })),
  },
];

const plus = (a: RollupSums, b: RollupSums): RollupSums => {
  const sum = zeroSums();
  for (const c of SUM_COLUMNS) sum[c] = a[c] + b[c];
  return sum;
};
const isZero = (d: RollupSums) => SUM_COLUMNS.every((c) => d[c] === 0);

interface Statements {
  /** Adds the sums to the rows named by the keys bound (one key, or one per `rows` of the table), answering the keys it found. */
  update: string;
  upsert: string;
}

/**
 * The statements that move rollup rows, as SQL text made once per table, number of rows and
 * dialect: they run on every report the collector takes, where building them with the query
 * builder each time cost as much as running them. An UPDATE of the rows by their keys comes
 * first, and an upsert only for a key it did not find: on SQLite the upsert costs several times
 * the plain UPDATE, and most reports add to rows that exist (the visit's own, its hour's and day's).
 * A session's rows of one table differ in their last two key columns at most (the site's daily
 * rows: dimension and value), which the UPDATE returns to tell the rows it found. Parameters: the
 * sums, then each key in `rows()`'s column order. Named statements on PostgreSQL.
 */
const statements = newCache<Statements>(CACHES.rollupStatements);
function statementsFor(db: Kysely<Database>, table: RollupTable['name'], columns: string[], rows: number): Statements {
  const postgres = isPostgres(db);
  const id = `${table}|${rows}|${postgres}`;
  let known = statements.get(id);
  if (known === undefined) {
    // Planned once on SQLite, not on every run for the values bound; the values come with each run.
    const at = () => planOnce(db, 0);
    const sums = sql.join(SUM_COLUMNS.map((c) => sql`${sql.raw(`${c} = ${c} + `)}${at()}`));
    const equal = (cs: readonly string[]) =>
      sql.join(
        cs.map((c) => sql`${sql.raw(`${c} = `)}${at()}`),
        sql` and `,
      );
    const varying = rows === 1 ? [] : columns.slice(-2);
    // Each row named by its whole key: an OR whose terms each name a whole primary key is one index
    // lookup a term on SQLite ("MULTI-INDEX OR"). Shared columns written once, outside the OR, left
    // SQLite only the key's first column to search by: the tenant's whole history, on every report.
    const where =
      rows === 1
        ? equal(columns)
        : sql.join(
            Array.from({ length: rows }, () => sql`(${equal(columns)})`),
            sql` or `,
          );
    // One row: whether it was found is the count of rows changed. Several: the ones found, by the text columns that tell them apart.
    const returning = rows === 1 ? sql`` : sql` returning ${sql.raw(varying.join(', '))}`;
    const update = sql`update ${sql.raw(table)} set ${sums} where ${where}${returning}`;
    const inserted = [...SUM_COLUMNS, ...columns];
    const upsert = sql`insert into ${sql.raw(table)} (${sql.raw(inserted.join(', '))}) values (${sql.join(inserted.map(at))})
        on conflict (${sql.raw(CONFLICT[table].join(', '))}) do update set
        ${sql.raw(SUM_COLUMNS.map((c) => `${c} = ${table}.${c} + excluded.${c}`).join(', '))}`;
    known = { update: update.compile(db).sql, upsert: upsert.compile(db).sql };
    if (postgres) for (const text of Object.values(known)) registerHot(text);
    statements.set(id, known);
  }
  return known;
}
const CONFLICT = Object.fromEntries(TABLES.map((t) => [t.name, t.conflict])) as Record<TableName, readonly string[]>;

const keyText = (key: Key) => JSON.stringify(key);

/** Adds `delta` to each row of `table` named by `keys` (one key, or a session's `rows()` of one table). */
async function addTo(trx: Transaction<Database>, table: TableName, keys: Key[], delta: RollupSums): Promise<void> {
  const [first] = keys;
  if (isZero(delta) || first === undefined) return;
  const columns = Object.keys(first);
  const { update, upsert } = statementsFor(trx, table, columns, keys.length);
  const sums = SUM_COLUMNS.map((c) => delta[c]);
  const varying = keys.length === 1 ? [] : columns.slice(-2);
  const values = [...sums, ...keys.flatMap((k) => columns.map((c) => k[c]))];
  const updated = await trx.executeQuery<Key>(CompiledQuery.raw(update, values));
  // A row found, told from the others by its varying columns ('' for the one row of a single key).
  const tell = (row: Key) => varying.map((c) => String(row[c])).join('\u0000');
  const found = keys.length === 1 ? new Set(Number(updated.numAffectedRows ?? 0n) > 0 ? [''] : []) : new Set(updated.rows.map(tell));
  for (const key of keys) {
    if (!found.has(tell(key))) await trx.executeQuery(CompiledQuery.raw(upsert, [...sums, ...columns.map((c) => key[c])]));
  }
  // A row left with no visit holds nothing any more (at most the rounding residue of its sums).
  if (delta.visits < 0) {
    for (const key of keys) {
      const where = sql.join(
        CONFLICT[table].map((c) => sql`${sql.ref(c)} = ${key[c]}`),
        sql` and `,
      );
      await sql`delete from ${sql.table(table)} where ${where} and visits <= 0`.execute(trx);
    }
  }
}

/**
 * Moves the rollups from a session's stored values (`before`; none for a new session) to its new
 * ones (`after`), in the transaction that writes the session: a session updated later is counted
 * once, with its final values. A change of hour or UTM values moves it between rows. Every
 * transaction that writes here moves the tenant's `sessions` counter first, which holds the
 * tenant's other writers off (PostgreSQL) until it ends: two never wait on each other in a cycle.
 */
export async function applySessionChange(
  trx: Transaction<Database>,
  before: RolledSession | undefined,
  after: RolledSession | undefined,
): Promise<void> {
  // Most reports of a visit change nothing the rollups hold (a steady state, read again): nothing to do.
  const sameRows = before !== undefined && after !== undefined && sameKeySources(before, after);
  if (sameRows && sameSums(before, after)) return;
  const from = before && { session: before, sums: sessionSums(before, -1) };
  const to = after && { session: after, sums: sessionSums(after, 1) };
  const changes = TABLES.map((table) => ({ table, changes: changesOf(table, from, to, sameRows) }));
  const tenantId = (after ?? before)?.tenant_id;
  // What the pages overview adds up moves with it (src/analytics/overview.ts); first, before the
  // rollup rows, as src/db/changes.ts asks.
  if (tenantId !== undefined && changes.some((c) => c.changes.some((change) => !isZero(change.delta)))) {
    await noteChange(trx, `sessions:${tenantId}`);
  }
  for (const { table, changes: ofTable } of changes) {
    for (const { keys, delta } of ofTable) await addTo(trx, table.name, keys, delta);
  }
}

/** A session as stored before or after a change, with what it adds to its rows (taken away: before). */
interface Side {
  session: RolledSession;
  sums: RollupSums;
}

/**
 * What a session's change adds to the rows of `table` it touches: its rows before and after, or
 * once when they are the same (`sameRows`: every column that names them is unchanged).
 */
function changesOf(table: RollupTable, from: Side | undefined, to: Side | undefined, sameRows: boolean): Change[] {
  // Most changes are a visit's later report: the session stays in its rows, one delta.
  if (from && to) {
    const keys = table.rows(to.session);
    if (sameRows || sameKeys(table.rows(from.session), keys)) return [{ keys, delta: plus(from.sums, to.sums) }];
  }
  const changes: Change[] = [];
  if (from) changes.push({ keys: table.rows(from.session), delta: from.sums });
  if (to) changes.push({ keys: table.rows(to.session), delta: to.sums });
  // In one order (by the first key), as every writer of the same rows takes them.
  return changes.sort((a, b) => (keyText(a.keys[0] ?? {}) < keyText(b.keys[0] ?? {}) ? -1 : 1));
}
interface Change {
  keys: Key[];
  delta: RollupSums;
}

function sameKeys(a: Key[], b: Key[]): boolean {
  return a.length === b.length && a.every((key, i) => sameKey(key, b[i]));
}
function sameKey(a: Key, b: Key | undefined): boolean {
  if (b === undefined) return false;
  for (const column in a) if (a[column] !== b[column]) return false;
  return true;
}

/** Whether a session stays in the same rows of every table: `rows()` reads nothing else. */
function sameKeySources(before: RolledSession, after: RolledSession): boolean {
  for (const column of KEY_SOURCES) if (before[column] !== after[column]) return false;
  return true;
}

/** Whether a session adds the same sums, compared as stored: no delta is built for a report that moves nothing. */
function sameSums(before: RolledSession, after: RolledSession): boolean {
  for (const [, column] of SOURCED_SUMS) if (Number(before[column]) !== Number(after[column])) return false;
  return true;
}

const SUM_LIST = sql.raw(SUM_COLUMNS.join(', '));
const HOUR_KEYS = sql.raw(['audience_id', ...SITE_DIMENSIONS].join(', '));

/** An instant column's UTC hour or day, as its first instant, in the column's own type. */
export function truncated<DB>(db: Kysely<DB>, unit: 'hour' | 'day', column: string): RawBuilder<string> {
  if (isPostgres(db)) return sql`date_trunc(${sql.lit(unit)}, ${sql.ref(column)} at time zone 'UTC') at time zone 'UTC'`;
  return unit === 'hour'
    ? sql`substr(${sql.ref(column)}, 1, 13) || ':00:00.000Z'`
    : sql`substr(${sql.ref(column)}, 1, 10) || 'T00:00:00.000Z'`;
}

/**
 * Rebuilds every rollup from the stored sessions, in one statement per table (and grouping): the
 * benchmark's seed runs it after its bulk inserts. Migrations keep frozen copies of their own
 * (migrations import nothing outside src/db/), so a change here reaches no migrated database.
 */
export async function rebuildRollups<DB>(db: Kysely<DB>): Promise<void> {
  const truncate = (unit: 'hour' | 'day') => truncated(db, unit, 'session_started_at');
  for (const table of TABLES) {
    await sql`delete from ${sql.table(table.name)}`.execute(db);
  }
  await sql`insert into analytics_hours_utm (tenant_id, page_id, hour, ${HOUR_KEYS}, ${SUM_LIST})
    select tenant_id, page_id, ${truncate('hour')}, ${HOUR_KEYS}, ${SESSION_SUMS}
    from audience_sessions group by tenant_id, page_id, ${truncate('hour')}, ${HOUR_KEYS}`.execute(db);
  await sql`insert into analytics_days (tenant_id, page_id, day, ${SUM_LIST})
    select tenant_id, page_id, ${truncate('day')}, ${SESSION_SUMS}
    from audience_sessions group by tenant_id, page_id, ${truncate('day')}`.execute(db);
  await sql`insert into analytics_site_hours (tenant_id, hour, ${SUM_LIST})
    select tenant_id, ${truncate('hour')}, ${SESSION_SUMS}
    from audience_sessions group by tenant_id, ${truncate('hour')}`.execute(db);
  for (const dimension of SITE_DIMENSIONS) {
    await sql`insert into analytics_site_days (tenant_id, dimension, day, value, ${SUM_LIST})
      select tenant_id, ${sql.lit(dimension)}, ${truncate('day')}, ${sql.ref(dimension)}, ${SESSION_SUMS}
      from audience_sessions group by tenant_id, ${truncate('day')}, ${sql.ref(dimension)}`.execute(db);
  }
}
