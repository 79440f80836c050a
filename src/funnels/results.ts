import { sql, type Kysely, type RawBuilder } from 'kysely';
import { CACHES, countedCache } from '../db/caches.js';
import { isPostgres } from '../db/adapter.js';
import type { Database, FunnelsTable } from '../db/types.js';
import { occurrenceOf, VISITOR } from '../goals/index.js';
import { resolveRange, GROUP_COLUMN as ANALYTICS_GROUP_COLUMN } from '../analytics/index.js';
import { labelGroups, topGroups } from '../audiences/index.js';
import type { FunnelGroupBy, FunnelResults, FunnelResultsQuery, FunnelStepResult } from './schemas.js';
import { type StoredStep, stepsOf } from './repository.js';

const DAY_MS = 86_400_000;

/** The session column a grouping reads (the first step's visit's): the analytics' own, where a funnel's groupings are a part of them. */
const GROUP_COLUMN: Record<FunnelGroupBy, string> = ANALYTICS_GROUP_COLUMN;

interface Row {
  step: number | string;
  g: string;
  visitors: number | string;
  median: number | string | null;
}

const sameTarget = (a: StoredStep, b: StoredStep) => a.kind === b.kind && a.target === b.target && a.pageId === b.pageId;

/**
 * The funnel's statement. Each visitor's first step is its earliest occurrence in the range; each
 * later step its earliest occurrence after the step before (strictly after, when both name the same
 * thing: one occurrence is never two steps) and within `windowHours` of the first. One pass over
 * the occurrences of the funnel's steps in the range (an index range per step), never the sessions.
 */
function funnelSql(
  pg: boolean,
  tenantId: string,
  steps: StoredStep[],
  windowHours: number,
  start: string,
  end: string,
  group: string | undefined,
) {
  const g = group === undefined ? sql`''` : sql.ref(`s.${group}`);
  // Where the dialects differ: the window's end, and seconds between two instants.
  const windowEnd = (t: RawBuilder<unknown>) =>
    pg ? sql`${t} + make_interval(hours => ${windowHours})` : sql`strftime('%Y-%m-%dT%H:%M:%fZ', ${t}, ${`+${windowHours} hours`})`;
  const seconds = (from: RawBuilder<unknown>, to: RawBuilder<unknown>) =>
    pg ? sql`extract(epoch from (${to} - ${from}))` : sql`(julianday(${to}) - julianday(${from})) * 86400.0`;

  // Materialized, each step's occurrences apart: the joins by visitor then meet two stored tables,
  // which SQLite indexes on the fly (an automatic index) and PostgreSQL hashes.
  const ctes: RawBuilder<unknown>[] = [
    sql`e as materialized (select ${VISITOR} as v, ${g} as g, ve.kind, ve.name, ve.page_id, ve.first_at as at
      from visit_events ve join audience_sessions s on s.id = ve.session_id left join audiences a on a.id = s.audience_id
      where ve.tenant_id = ${tenantId} and ve.first_at >= ${start} and ve.first_at < ${end}
        and (${sql.join(
          steps.map((s) => occurrenceOf(s, 've')),
          sql` or `,
        )}))`,
    ...steps.map((step, i) => sql`${sql.raw(`o${i}`)} as materialized (select v, g, at from e where ${occurrenceOf(step)})`),
    sql`s0 as materialized (select v, g, at as t, at as t0, at as prev from (
      select v, g, at, row_number() over (partition by v order by at, g) as rn from o0
    ) x where rn = 1)`,
  ];
  for (let i = 1; i < steps.length; i++) {
    const after = sameTarget(steps[i] as StoredStep, steps[i - 1] as StoredStep) ? sql`>` : sql`>=`;
    ctes.push(sql`${sql.raw(`s${i}`)} as materialized (select o.v, p.g, min(o.at) as t, p.t0, p.t as prev
      from ${sql.raw(`o${i}`)} o join ${sql.raw(`s${i - 1}`)} p on o.v = p.v
      where o.at ${after} p.t and o.at <= ${windowEnd(sql.ref('p.t0'))}
      group by o.v, p.g, p.t0, p.t)`);
  }
  const parts = steps.map((_, i) => {
    const s = sql.raw(`s${i}`);
    if (i === 0) return sql`select 0 as step, g, count(*) as visitors, null as median from s0 group by g`;
    // The median: PostgreSQL's percentile_cont; SQLite has none, so the middle row(s) by rank.
    if (pg) {
      return sql`select ${i} as step, g, count(*) as visitors,
        percentile_cont(0.5) within group (order by ${seconds(sql.ref('prev'), sql.ref('t'))}) as median from ${s} group by g`;
    }
    return sql`select ${i} as step, g, max(c) as visitors, avg(d) as median from (
        select g, d, row_number() over (partition by g order by d) as r, count(*) over (partition by g) as c
        from (select g, ${seconds(sql.ref('prev'), sql.ref('t'))} as d from ${s}) y
      ) z where r in ((c + 1) / 2, (c + 2) / 2) group by g`;
  });
  return sql<Row>`with ${sql.join(ctes)} ${sql.join(parts, sql` union all `)}`;
}

/**
 * Runs the funnel's statement. PostgreSQL has no statistics on the materialized steps, so it
 * takes each for a row or two and joins a step's occurrences to the visitors of the step before
 * by a nested loop: every pair compared (5 million at 100,000 visits, 500 million at a million).
 * Without nested loops for this one statement (in its own transaction) it hashes them by visitor.
 */
async function run(db: Kysely<Database>, statement: RawBuilder<Row>) {
  if (!isPostgres(db)) return statement.execute(db);
  return db.transaction().execute(async (trx) => {
    await sql`set local enable_nestloop = off`.execute(trx);
    return statement.execute(trx);
  });
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;
const ratio = (part: number, whole: number) => (whole > 0 ? round(part / whole) : null);

function toSteps(steps: StoredStep[], counts: Map<number, { visitors: number; median: number | null }>): FunnelStepResult[] {
  const first = counts.get(0)?.visitors ?? 0;
  return steps.map((step, index) => {
    const here = counts.get(index);
    const visitors = here?.visitors ?? 0;
    const previous = index === 0 ? first : (counts.get(index - 1)?.visitors ?? 0);
    return {
      index,
      name: step.name,
      visitors,
      conversionFromPrevious: ratio(visitors, previous),
      conversionFromStart: ratio(visitors, first),
      // To the millisecond: SQLite's julianday arithmetic leaves noise below it.
      medianSecondsFromPrevious: index === 0 || here?.median == null ? null : Math.round(Math.max(0, Number(here.median)) * 1000) / 1000,
    };
  });
}

/**
 * A funnel's results over a range (UTC; default the 30 days up to the next UTC midnight, at most
 * 400 days): visitors reaching each step in order, computed in one statement.
 */
export async function funnelResults(db: Kysely<Database>, row: FunnelsTable, query: FunnelResultsQuery): Promise<FunnelResults> {
  const nextMidnight = Math.floor(Date.now() / DAY_MS) * DAY_MS + DAY_MS;
  const range = resolveRange(query, nextMidnight, 'UTC');
  const [start, end] = [new Date(range.start).toISOString(), new Date(range.end).toISOString()];
  const key = `${row.id} ${row.updated_at} ${start} ${end} ${query.groupBy ?? ''}`;
  return answers(db, row.tenant_id, key, { db, row, start, end, groupBy: query.groupBy });
}

interface Fill {
  db: Kysely<Database>;
  row: FunnelsTable;
  start: string;
  end: string;
  groupBy: FunnelGroupBy | undefined;
}

/**
 * Answers kept per funnel (as it was last changed), range, grouping and the tenant's `sessions`
 * change counter, which every write of a visit's sums or occurrences moves: 10 s at most, so a
 * dashboard polled by many viewers costs one statement per change. docs/contributing.md lists it.
 */
const answers = countedCache(CACHES.funnelResults, compute);

async function compute({ db, row, start, end, groupBy }: Fill): Promise<FunnelResults> {
  const query = { groupBy };
  const steps = stepsOf(row);
  const windowHours = Number(row.window_hours);
  const group = query.groupBy === undefined ? undefined : GROUP_COLUMN[query.groupBy];
  const { rows } = await run(db, funnelSql(isPostgres(db), row.tenant_id, steps, windowHours, start, end, group));

  const byGroup = new Map<string, Map<number, { visitors: number; median: number | null }>>();
  for (const r of rows) {
    const counts = byGroup.get(String(r.g)) ?? new Map();
    byGroup.set(String(r.g), counts);
    counts.set(Number(r.step), { visitors: Number(r.visitors), median: r.median === null ? null : Number(r.median) });
  }
  const total = new Map<number, { visitors: number; median: number | null }>();
  if (group === undefined) for (const [k, v] of byGroup.get('') ?? []) total.set(k, v);
  const result: FunnelResults = { funnelId: row.id, startDate: start, endDate: end, windowHours, steps: [] };
  if (group === undefined) {
    result.steps = toSteps(steps, total);
    return result;
  }
  // Grouped: the totals need the medians over all groups, so the ungrouped statement answers them.
  const { rows: all } = await run(db, funnelSql(isPostgres(db), row.tenant_id, steps, windowHours, start, end, undefined));
  for (const r of all) total.set(Number(r.step), { visitors: Number(r.visitors), median: r.median === null ? null : Number(r.median) });
  result.steps = toSteps(steps, total);
  const top = topGroups(byGroup, (counts) => counts.get(0)?.visitors ?? 0);
  const labelled = await labelGroups(db, row.tenant_id, query.groupBy ?? '', top);
  result.groups = labelled.map(({ key, label, value }) => ({ key, label, steps: toSteps(steps, value) }));
  return result;
}
