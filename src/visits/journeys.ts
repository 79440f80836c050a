import { sql, type Kysely, type RawBuilder } from 'kysely';
import { isPostgres } from '../db/adapter.js';
import type { Database } from '../db/types.js';
import { occurrenceOf, type Target, VISITOR } from '../goals/index.js';
import type { ArmCount, FunnelQuery, FunnelStepCount } from './port.js';

// The port's reads that follow a visitor (or an experiment's unit) from visit to visit, as SQLite
// and PostgreSQL answer them: a funnel's steps in order, and an experiment's units per arm.

const sameTarget = (a: Target, b: Target) => a.kind === b.kind && a.target === b.target && a.pageId === b.pageId;

/**
 * The funnel's statement. Each visitor's first step is its earliest occurrence in the range; each
 * later step its earliest occurrence after the step before (strictly after, when both name the same
 * thing: one occurrence is never two steps) and within `windowHours` of the first. One pass over
 * the occurrences of the funnel's steps in the range (an index range per step), never the sessions.
 */
function funnelSql(pg: boolean, { tenantId, steps, windowHours, start, end, group }: FunnelQuery) {
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
    const after = sameTarget(steps[i] as Target, steps[i - 1] as Target) ? sql`>` : sql`>=`;
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
  return sql<FunnelStepCount>`with ${sql.join(ctes)} ${sql.join(parts, sql` union all `)}`;
}

/**
 * Runs the funnel's statement. PostgreSQL has no statistics on the materialized steps, so it
 * takes each for a row or two and joins a step's occurrences to the visitors of the step before
 * by a nested loop: every pair compared (5 million at 100,000 visits, 500 million at a million).
 * Without nested loops for this one statement (in its own transaction) it hashes them by visitor.
 */
export async function funnelSteps(db: Kysely<Database>, query: FunnelQuery): Promise<FunnelStepCount[]> {
  const statement = funnelSql(isPostgres(db), query);
  if (!isPostgres(db)) return (await statement.execute(db)).rows;
  return db.transaction().execute(async (trx) => {
    await sql`set local enable_nestloop = off`.execute(trx);
    return (await statement.execute(trx)).rows;
  });
}

/**
 * Counted in SQL: each unit once, in its first arm (the one stored at its first exposure, else that
 * of its first visit) and in the period of its first exposure (when its arm was drawn, under that
 * period's weights), with all its visits, converted when any of them converted (a form submission
 * or `pam.conversion()`, or with a goal, the goal). Visits recorded before arms were kept (migration
 * 0032), when a weight change could move a unit, still count it once, in the arm of its first visit.
 */
export async function armCounts(db: Kysely<Database>, experimentId: string, goal?: Target): Promise<ArmCount[]> {
  const converted =
    goal === undefined
      ? sql`has_conversion = 1 or has_form_submit = 1`
      : sql`exists (select 1 from visit_events e where e.session_id = audience_sessions.id and ${occurrenceOf(goal)})`;
  const { rows } = await sql<ArmCount>`
    with s as (
      select experiment_unit as unit, experiment_arm as arm, session_started_at as started_at,
        case when ${converted} then 1 else 0 end as converted,
        row_number() over (partition by experiment_unit order by session_started_at, id) as nth
      from audience_sessions where experiment_id = ${experimentId}
    ), u as (
      select unit, max(case when nth = 1 then arm end) as first_arm, min(started_at) as first_at, count(*) as visits,
        max(converted) as converted
      from s group by unit
    ), f as (
      select coalesce(k.arm, u.first_arm) as arm, coalesce(k.assigned_at, u.first_at) as first_at, u.visits, u.converted
      from u left join experiment_units k on k.experiment_id = ${experimentId} and k.unit = u.unit
    ), p as (
      select number, started_at, lead(started_at) over (order by number) as next_at
      from experiment_periods where experiment_id = ${experimentId}
    )
    select p.number as number, f.arm as arm, count(*) as units, sum(f.visits) as visits, sum(f.converted) as conversions
    from f join p on (p.number = 1 or p.started_at <= f.first_at) and (p.next_at is null or f.first_at < p.next_at)
    group by p.number, f.arm`.execute(db);
  return rows;
}
