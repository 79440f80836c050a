import type { Kysely } from 'kysely';
import { CACHES, countedCache } from '../db/caches.js';
import type { Database, FunnelsTable } from '../db/types.js';
import { type GroupColumn, visitReads } from '../visits/index.js';
import { resolveRange, GROUP_COLUMN as ANALYTICS_GROUP_COLUMN } from '../analytics/index.js';
import { labelGroups, topGroups } from '../audiences/index.js';
import type { FunnelGroupBy, FunnelResults, FunnelResultsQuery, FunnelStepResult } from './schemas.js';
import { type StoredStep, stepsOf } from './repository.js';

const DAY_MS = 86_400_000;

/** The session column a grouping reads (the first step's visit's): the analytics' own, where a funnel's groupings are a part of them. */
const GROUP_COLUMN: Record<FunnelGroupBy, GroupColumn> = ANALYTICS_GROUP_COLUMN;

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
 * 400 days): visitors reaching each step in order, computed in one statement (visits/journeys.ts).
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
  const read = (group: GroupColumn | undefined) =>
    visitReads(db).funnelSteps({ tenantId: row.tenant_id, steps, windowHours, start, end, group });
  const rows = await read(group);

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
  const all = await read(undefined);
  for (const r of all) total.set(Number(r.step), { visitors: Number(r.visitors), median: r.median === null ? null : Number(r.median) });
  result.steps = toSteps(steps, total);
  const top = topGroups(byGroup, (counts) => counts.get(0)?.visitors ?? 0);
  const labelled = await labelGroups(db, row.tenant_id, query.groupBy ?? '', top);
  result.groups = labelled.map(({ key, label, value }) => ({ key, label, steps: toSteps(steps, value) }));
  return result;
}
