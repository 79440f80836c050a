import { CompiledQuery, sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import { isPostgres } from '../db/adapter.js';
import { noteChange } from '../db/changes.js';
import { planOnce } from '../db/plan-once.js';
import type { AudienceSessionsTable, Database, RollupSums } from '../db/types.js';
import { SUM_COLUMNS } from './metrics.js';

/** What of a session the rollups hold: where it belongs and what it adds up to. */
export type RolledSession = Pick<
  AudienceSessionsTable,
  | 'tenant_id'
  | 'page_id'
  | 'audience_id'
  | 'session_started_at'
  | 'time_spent_seconds'
  | 'max_scroll_depth_percentage'
  | 'total_clicks_count'
  | 'questions_asked_count'
  | 'is_bounce'
  | 'has_form_submit'
  | 'has_conversion'
  | 'utm_source'
  | 'utm_medium'
  | 'utm_campaign'
>;

/** The UTC hour and day an instant (ISO 8601 in UTC, as stored) falls in, as their first instant. */
export const hourOf = (instant: string): string => `${instant.slice(0, 13)}:00:00.000Z`;
export const dayOf = (instant: string): string => `${instant.slice(0, 10)}T00:00:00.000Z`;

type Key = Record<string, string>;
interface RollupTable {
  name: 'analytics_hours_utm' | 'analytics_days';
  key: (s: RolledSession) => Key;
}

const TABLES: readonly RollupTable[] = [
  {
    name: 'analytics_hours_utm',
    key: (s) => ({
      page_id: s.page_id,
      hour: hourOf(s.session_started_at),
      audience_id: s.audience_id,
      utm_source: s.utm_source,
      utm_medium: s.utm_medium,
      utm_campaign: s.utm_campaign,
      tenant_id: s.tenant_id,
    }),
  },
  { name: 'analytics_days', key: (s) => ({ tenant_id: s.tenant_id, day: dayOf(s.session_started_at), page_id: s.page_id }) },
];

/** The primary key columns of each table (tenant_id rides along in the hourly ones, outside their key). */
const CONFLICT: Record<RollupTable['name'], string[]> = {
  analytics_hours_utm: ['page_id', 'hour', 'audience_id', 'utm_source', 'utm_medium', 'utm_campaign'],
  analytics_days: ['tenant_id', 'day', 'page_id'],
};

function sumsOf(s: RolledSession, sign: 1 | -1): RollupSums {
  return {
    visits: sign,
    bounces: sign * Number(s.is_bounce),
    time_spent_seconds: sign * Number(s.time_spent_seconds),
    scroll_sum: sign * Number(s.max_scroll_depth_percentage),
    clicks: sign * Number(s.total_clicks_count),
    questions: sign * Number(s.questions_asked_count),
    form_submits: sign * Number(s.has_form_submit),
    conversions: sign * Number(s.has_conversion),
  };
}

const plus = (a: RollupSums, b: RollupSums): RollupSums => ({
  visits: a.visits + b.visits,
  bounces: a.bounces + b.bounces,
  time_spent_seconds: a.time_spent_seconds + b.time_spent_seconds,
  scroll_sum: a.scroll_sum + b.scroll_sum,
  clicks: a.clicks + b.clicks,
  questions: a.questions + b.questions,
  form_submits: a.form_submits + b.form_submits,
  conversions: a.conversions + b.conversions,
});
const isZero = (d: RollupSums) => SUM_COLUMNS.every((c) => d[c] === 0);

/**
 * The statements that move one rollup row, as SQL text made once per table and dialect: they run
 * on every report the collector takes, where building them with the query builder each time cost
 * as much as running them. An UPDATE of the row by its key comes first, and an upsert only when
 * there is no row yet: on SQLite the upsert costs several times the plain UPDATE, and most reports
 * add to a row that exists (the visit's own). Parameters: the sums, then the key in `key()`'s order.
 */
const statements = new Map<string, { update: string; upsert: string }>();
function statementsFor(db: Kysely<Database>, table: RollupTable['name'], keyColumns: string[]) {
  const postgres = isPostgres(db);
  const id = `${table}|${postgres}`;
  let known = statements.get(id);
  if (known === undefined) {
    // Planned once on SQLite, not on every run for the values bound; the values come with each run.
    const at = () => planOnce(db, 0);
    const sums = sql.join(SUM_COLUMNS.map((c) => sql`${sql.raw(`${c} = ${c} + `)}${at()}`));
    const where = sql.join(
      keyColumns.map((c) => sql`${sql.raw(`${c} = `)}${at()}`),
      sql` and `,
    );
    const columns = [...SUM_COLUMNS, ...keyColumns];
    const update = sql`update ${sql.raw(table)} set ${sums} where ${where}`;
    const upsert = sql`insert into ${sql.raw(table)} (${sql.raw(columns.join(', '))}) values (${sql.join(columns.map(at))})
        on conflict (${sql.raw(CONFLICT[table].join(', '))}) do update set
        ${sql.raw(SUM_COLUMNS.map((c) => `${c} = ${table}.${c} + excluded.${c}`).join(', '))}`;
    known = { update: update.compile(db).sql, upsert: upsert.compile(db).sql };
    statements.set(id, known);
  }
  return known;
}

async function addTo(trx: Transaction<Database>, table: RollupTable['name'], key: Key, delta: RollupSums): Promise<void> {
  if (isZero(delta)) return;
  // The key's tenant_id rides along outside the hourly tables' primary key: matching it too is harmless.
  const { update, upsert } = statementsFor(trx, table, Object.keys(key));
  const values = [...SUM_COLUMNS.map((c) => delta[c]), ...Object.values(key)];
  const updated = await trx.executeQuery(CompiledQuery.raw(update, values));
  if (Number(updated.numAffectedRows ?? 0n) === 0) await trx.executeQuery(CompiledQuery.raw(upsert, values));
  // A row left with no visit holds nothing any more (at most the rounding residue of its sums).
  if (delta.visits < 0) {
    const target = sql.table(table);
    const where = sql.join(
      CONFLICT[table].map((c) => sql`${sql.ref(c)} = ${key[c]}`),
      sql` and `,
    );
    await sql`delete from ${target} where ${where} and visits <= 0`.execute(trx);
  }
}

/**
 * Moves the rollups from a session's stored values (`before`; none for a new session) to its new
 * ones (`after`), in the transaction that writes the session: a session updated later is counted
 * once, with its final values. A change of hour or UTM values moves it between rows. Rows are
 * written in one order (table, then key), so two transactions never wait on each other in a cycle.
 */
export async function applySessionChange(
  trx: Transaction<Database>,
  before: RolledSession | undefined,
  after: RolledSession | undefined,
): Promise<void> {
  const changes = TABLES.map((table) => ({ table, changes: changesOf(table, before, after) }));
  const tenantId = (after ?? before)?.tenant_id;
  // What the pages overview adds up moves with it (src/analytics/overview.ts); first, before the
  // rollup rows, as src/db/changes.ts asks.
  if (tenantId !== undefined && changes.some((c) => c.changes.some((change) => !isZero(change.delta)))) {
    await noteChange(trx, `sessions:${tenantId}`);
  }
  for (const { table, changes: ofTable } of changes) {
    for (const { key, delta } of ofTable) await addTo(trx, table.name, key, delta);
  }
}

/** What a session's change adds to each row of `table` it touches, in key order. */
function changesOf(table: RollupTable, before: RolledSession | undefined, after: RolledSession | undefined): Change[] {
  // Most changes are a visit's later report: the session stays in its row, one delta.
  if (before && after) {
    const key = table.key(after);
    if (sameKey(table.key(before), key)) return [{ key, delta: plus(sumsOf(before, -1), sumsOf(after, 1)) }];
  }
  const changes: Change[] = [];
  if (before) changes.push({ key: table.key(before), delta: sumsOf(before, -1) });
  if (after) changes.push({ key: table.key(after), delta: sumsOf(after, 1) });
  return changes.sort((a, b) => (JSON.stringify(a.key) < JSON.stringify(b.key) ? -1 : 1));
}
interface Change {
  key: Key;
  delta: RollupSums;
}

function sameKey(a: Key, b: Key): boolean {
  for (const column in a) if (a[column] !== b[column]) return false;
  return true;
}

const SESSION_SUMS = sql.raw(`count(*), sum(is_bounce), sum(time_spent_seconds), sum(max_scroll_depth_percentage),
  sum(total_clicks_count), sum(questions_asked_count), sum(has_form_submit), sum(has_conversion)`);
const SUM_LIST = sql.raw(
  ['visits', 'bounces', 'time_spent_seconds', 'scroll_sum', 'clicks', 'questions', 'form_submits', 'conversions'].join(', '),
);

/**
 * Rebuilds every rollup from the stored sessions, in one statement per table: the benchmark's seed
 * runs it after its bulk inserts. Migration 0013 keeps a frozen copy of its own (migrations import
 * nothing outside src/db/), so a change here reaches no migrated database.
 */
export async function rebuildRollups<DB>(db: Kysely<DB>): Promise<void> {
  const truncate = (unit: 'hour' | 'day'): RawBuilder<string> =>
    isPostgres(db)
      ? sql`date_trunc(${sql.lit(unit)}, session_started_at at time zone 'UTC') at time zone 'UTC'`
      : unit === 'hour'
        ? sql`substr(session_started_at, 1, 13) || ':00:00.000Z'`
        : sql`substr(session_started_at, 1, 10) || 'T00:00:00.000Z'`;
  for (const table of ['analytics_hours_utm', 'analytics_days']) {
    await sql`delete from ${sql.table(table)}`.execute(db);
  }
  await sql`insert into analytics_hours_utm (tenant_id, page_id, audience_id, hour, utm_source, utm_medium, utm_campaign, ${SUM_LIST})
    select tenant_id, page_id, audience_id, ${truncate('hour')}, utm_source, utm_medium, utm_campaign, ${SESSION_SUMS}
    from audience_sessions group by tenant_id, page_id, audience_id, ${truncate('hour')}, utm_source, utm_medium, utm_campaign`.execute(db);
  await sql`insert into analytics_days (tenant_id, page_id, day, ${SUM_LIST})
    select tenant_id, page_id, ${truncate('day')}, ${SESSION_SUMS}
    from audience_sessions group by tenant_id, page_id, ${truncate('day')}`.execute(db);
}
