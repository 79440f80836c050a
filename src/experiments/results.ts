import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, ExperimentPeriodsTable, ExperimentsTable } from '../db/types.js';
import type { Target } from '../goals/index.js';
import { visitReads } from '../visits/index.js';
import { baselineFirst, periodsOf } from './repository.js';
import type { ExperimentResults } from './schemas.js';
import { type Analysis, type ArmCounts, analyse, type EarlierLooks } from './statistics.js';

/** Per period and arm: units (by the period of their first exposure), their visits, and units that converted. */
type Counts = Map<number, Record<string, ArmCounts>>;

/** The experiment's counts by period and arm (visits/journeys.ts); with a goal, it is the conversion. */
export async function countsByPeriod(db: Kysely<Database>, experimentId: string, goal?: Target): Promise<Counts> {
  const rows = await visitReads(db).armCounts(experimentId, goal);
  const counts: Counts = new Map();
  for (const r of rows) {
    const period = counts.get(Number(r.number)) ?? {};
    period[r.arm] = { units: Number(r.units), visits: Number(r.visits), conversions: Number(r.conversions) };
    counts.set(Number(r.number), period);
  }
  return counts;
}

/** The experiment's own seed for probabilityBest's draws: the same counts always give the same answer. */
const seedOf = (experimentId: string) => (createHash('sha256').update(experimentId).digest().readUInt32BE(0) % 0xffff_fffe) + 1;

/**
 * The results as the API shows them, computed from the counts; reading them writes nothing. The
 * first winner, and each arm's smallest p-value, are recorded by the scheduled looks (looks.ts); the
 * results take the running minimum of those and of this look. With a goal, the goal is the
 * conversion (`goalId` in the answer) and only this look counts: the looks follow the experiment's
 * own conversion, and so do `firstWinnerAt` and the decision that stays.
 */
export async function experimentResults(
  db: Kysely<Database>,
  row: ExperimentsTable,
  goal?: { goalId: string; target: Target },
): Promise<ExperimentResults> {
  const periods = await periodsOf(db, row.id);
  const analysis = await analyseExperiment(db, row, periods, goal?.target);
  return {
    experimentId: row.id,
    status: row.status,
    startedAt: row.started_at,
    arms: analysis.arms,
    srm: analysis.srm,
    decision: analysis.decision,
    winner: analysis.winner,
    current: analysis.current,
    periods: periods.map(toPeriod),
    firstWinnerAt: row.first_winner_at,
    ...(goal === undefined ? {} : { goalId: goal.goalId }),
  };
}

/** The analysis of the experiment's counts, over its earlier looks unless a goal replaces its conversion. */
export async function analyseExperiment(
  db: Kysely<Database>,
  row: ExperimentsTable,
  periods: ExperimentPeriodsTable[],
  goal?: Target,
): Promise<Analysis> {
  const counts = await countsByPeriod(db, row.id, goal);
  const arms = baselineFirst(row);
  const known = new Set(arms.map((a) => a.key));
  return analyse({
    arms: arms.map((a) => ({ key: a.key, weight: a.weight })),
    periods: periods.map((p) => ({
      weights: JSON.parse(p.weights) as Record<string, number>,
      arms: only(counts.get(p.number) ?? {}, known),
    })),
    minimumUnitsPerArm: Number(row.minimum_visits_per_arm),
    seed: seedOf(row.id),
    ...(goal === undefined ? { earlier: await earlierLooks(db, row) } : {}),
  });
}

async function earlierLooks(db: Kysely<Database>, row: ExperimentsTable): Promise<EarlierLooks> {
  const rows = await db
    .selectFrom('experiment_look_minima')
    .select(['arm', 'p_value', 'difference'])
    .where('experiment_id', '=', row.id)
    .execute();
  const minima = Object.fromEntries(rows.map((r) => [r.arm, { pValue: Number(r.p_value), difference: Number(r.difference) }]));
  return { minima, winner: row.first_winner_at === null ? null : row.first_winner };
}

const toPeriod = (p: ExperimentPeriodsTable) => ({
  number: Number(p.number),
  startedAt: p.started_at,
  weights: JSON.parse(p.weights) as Record<string, number>,
  reason: p.reason,
});

/** Counts of arms the experiment still has (an arm cannot be removed, but a stray value must not break the analysis). */
function only(arms: Record<string, ArmCounts>, known: Set<string>): Record<string, ArmCounts> {
  return Object.fromEntries(Object.entries(arms).filter(([key]) => known.has(key)));
}
