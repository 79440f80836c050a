import { sql, type Kysely, type Transaction } from 'kysely';
import { lockExclusive } from '../db/locks.js';
import type { Database, ExperimentPeriodsTable, ExperimentsTable, PagesTable } from '../db/types.js';
import { emit } from '../events/index.js';
import { AppError, conflict, invalidField, notFound } from '../http/errors.js';
import { keysetList, NEWEST_FIRST } from '../http/pagination.js';
import { newId } from '../ids.js';
import { after, now } from '../time.js';
import { checkArms, checkSegmentHoldout, checkVersionsExperiment, type StoredArm } from './rules.js';
import { settle } from '../http/round-trip.js';
import { type Experiment, type ExperimentCreate, type ExperimentListQuery, ExperimentUpdate } from './schemas.js';

export const armsOf = (row: Pick<ExperimentsTable, 'arms'>): StoredArm[] => JSON.parse(row.arms) as StoredArm[];

export const toExperiment = (row: ExperimentsTable): Experiment => ({
  experimentId: row.id,
  pageId: row.page_id,
  audienceId: row.audience_id,
  name: row.name,
  kind: row.kind,
  allocation: row.allocation,
  minimumUnitsPerArm: Number(row.minimum_visits_per_arm),
  status: row.status,
  arms: armsOf(row),
  winner: row.winner,
  startedAt: row.started_at,
  concludedAt: row.concluded_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** A holdout's arms in results order: control (the baseline) first. */
export function baselineFirst(row: ExperimentsTable): StoredArm[] {
  const arms = armsOf(row);
  return row.kind === 'holdout' ? [...arms].sort((a, b) => (a.key === 'control' ? -1 : b.key === 'control' ? 1 : 0)) : arms;
}

export async function createExperiment(trx: Transaction<Database>, page: PagesTable, input: ExperimentCreate): Promise<Experiment> {
  const arms = checkArms(input);
  const minimum = minimumUnitsOf(input);
  if (input.kind === 'versions') await checkVersionsExperiment(trx, page, input.audienceId ?? '', arms, 'create');
  else if (input.audienceId !== undefined) await checkSegmentHoldout(trx, page, input.audienceId);
  const at = now();
  const row: ExperimentsTable = {
    id: newId('experiment'),
    tenant_id: page.tenant_id,
    page_id: page.id,
    audience_id: input.audienceId ?? null,
    name: input.name,
    kind: input.kind,
    allocation: input.allocation ?? 'fixed',
    minimum_visits_per_arm: minimum,
    status: 'draft',
    arms: JSON.stringify(arms),
    winner: null,
    first_winner_at: null,
    first_winner: null,
    next_reweigh_at: null,
    started_at: null,
    concluded_at: null,
    created_at: at,
    updated_at: at,
  };
  await trx.insertInto('experiments').values(row).execute();
  return toExperiment(row);
}

/** `minimumUnitsPerArm`, or its former name `minimumVisitsPerArm` (an alias: both given, they must agree). */
function minimumUnitsOf(input: ExperimentCreate): number {
  const { minimumUnitsPerArm: units, minimumVisitsPerArm: alias } = input;
  if (units !== undefined && alias !== undefined && units !== alias)
    throw invalidField('/minimumVisitsPerArm', 'is the former name of minimumUnitsPerArm: send one, or both equal');
  return units ?? alias ?? 100;
}

export function findExperiment(db: Kysely<Database>, page: PagesTable, experimentId: string) {
  return db
    .selectFrom('experiments')
    .selectAll()
    .where('id', '=', experimentId)
    .where('page_id', '=', page.id)
    .where('tenant_id', '=', page.tenant_id)
    .executeTakeFirst();
}

export async function experimentOf(db: Kysely<Database>, page: PagesTable, experimentId: string): Promise<ExperimentsTable> {
  const row = await findExperiment(db, page, experimentId);
  if (!row) throw notFound('Experiment');
  return row;
}

const experimentsList = keysetList({ name: 'experiments', table: 'experiments', ...NEWEST_FIRST });

export async function listExperiments(db: Kysely<Database>, page: PagesTable, query: ExperimentListQuery) {
  const ofPage = db.selectFrom('experiments').where('page_id', '=', page.id).where('tenant_id', '=', page.tenant_id);
  return experimentsList.read({ query, within: page.id, rows: ofPage.selectAll(), count: ofPage, map: toExperiment });
}

/** The periods, oldest first. */
export function periodsOf(db: Kysely<Database>, experimentId: string): Promise<ExperimentPeriodsTable[]> {
  return db.selectFrom('experiment_periods').selectAll().where('experiment_id', '=', experimentId).orderBy('number').execute();
}

/** A new stretch of fixed weights, numbered after the last. */
export async function startPeriod(
  trx: Kysely<Database>,
  experimentId: string,
  arms: StoredArm[],
  reason: ExperimentPeriodsTable['reason'],
) {
  const last = await trx
    .selectFrom('experiment_periods')
    .select((eb) => eb.fn.max('number').as('n'))
    .where('experiment_id', '=', experimentId)
    .executeTakeFirst();
  const weights = Object.fromEntries(arms.map((a) => [a.key, a.weight]));
  await trx
    .insertInto('experiment_periods')
    .values({ experiment_id: experimentId, number: Number(last?.n ?? 0) + 1, started_at: now(), weights: JSON.stringify(weights), reason })
    .execute();
}

/** The name, and the weights while draft or running (a running experiment starts a new period). */
export async function updateExperiment(trx: Transaction<Database>, current: ExperimentsTable, body: ExperimentUpdate): Promise<Experiment> {
  // Read-only fields sent back must equal what they are (400 naming each otherwise); the former name too.
  const { minimumVisitsPerArm: alias, ...rest } = body;
  const shown = toExperiment(current);
  if (alias !== undefined && alias !== shown.minimumUnitsPerArm)
    throw invalidField('/minimumVisitsPerArm', 'is read-only (the former name of minimumUnitsPerArm): it must equal the current value');
  const changes = settle(ExperimentUpdate, rest, shown);
  if (current.status === 'concluded') throw conflict('A concluded experiment cannot be changed');
  const arms = armsOf(current);
  let next = arms;
  if (changes.arms !== undefined) {
    const given = changes.arms;
    const keys = new Set(given.map((a) => a.key));
    if (given.length !== arms.length || arms.some((a) => !keys.has(a.key)) || keys.size !== given.length)
      throw invalidField('/arms', `must name every arm once, as it is (${arms.map((a) => a.key).join(', ')}); only weights change`);
    given.forEach((a, i) => {
      const stored = arms.find((s) => s.key === a.key);
      if (a.versionId !== undefined && a.versionId !== stored?.versionId)
        throw invalidField(`/arms/${i}/versionId`, 'is read-only: send it as it is, or leave it out');
    });
    next = arms.map((a) => ({ ...a, weight: given.find((g) => g.key === a.key)?.weight ?? a.weight }));
  }
  const weightsChanged = next.some((a, i) => a.weight !== arms[i]?.weight);
  const row: ExperimentsTable = {
    ...current,
    name: changes.name ?? current.name,
    arms: JSON.stringify(next),
    updated_at: after(current.updated_at),
  };
  const updated = await trx
    .updateTable('experiments')
    .set({ name: row.name, arms: row.arms, updated_at: row.updated_at })
    .where('id', '=', current.id)
    .where('status', '=', current.status)
    .executeTakeFirst();
  if (updated.numUpdatedRows === 0n) throw conflict('The experiment was changed by another request; read it again and retry');
  if (weightsChanged && current.status === 'running') await startPeriod(trx, current.id, next, 'weights_changed');
  return toExperiment(row);
}

/** Only a draft is deleted (a started experiment's visits refer to it). */
export async function deleteExperiment(trx: Transaction<Database>, current: ExperimentsTable): Promise<void> {
  if (current.status !== 'draft') throw conflict(`A ${current.status} experiment cannot be deleted; only a draft can`);
  await trx.deleteFrom('experiments').where('id', '=', current.id).where('status', '=', 'draft').execute();
}

/** When a bandit's weights are next recomputed: at most every 15 minutes. */
export const BANDIT_EVERY_MS = 15 * 60 * 1000;

/** A holdout without an audience: it covers every audience of its page with a person. */
const coversPage = (row: Pick<ExperimentsTable, 'kind' | 'audience_id'>) => row.kind === 'holdout' && row.audience_id === null;

/**
 * draft → running. A page runs at most one experiment per audience: a holdout without an audience
 * counts for every audience of its page, a segment's holdout and a `versions` experiment for
 * their own. Checked under a lock on the page, so two starts racing (on two instances) cannot both win.
 */
export async function startExperiment(trx: Transaction<Database>, page: PagesTable, current: ExperimentsTable): Promise<Experiment> {
  if (current.status !== 'draft') throw conflict(`A ${current.status} experiment cannot be started; only a draft can`);
  await lockExclusive(trx, `experiments:${page.id}`);
  const running = await trx
    .selectFrom('experiments')
    .select(['id', 'kind', 'audience_id'])
    .where('page_id', '=', page.id)
    .where(sql<boolean>`status = 'running'`)
    .execute();
  const clash = running.find((r) => coversPage(r) || coversPage(current) || r.audience_id === current.audience_id);
  if (clash)
    throw new AppError(
      'conflict',
      `Experiment ${clash.id} is running on ${coversPage(current) || coversPage(clash) ? 'this page' : 'this audience'}: conclude it first`,
    );
  const arms = armsOf(current);
  if (current.kind === 'versions') await checkVersionsExperiment(trx, page, current.audience_id ?? '', arms, 'start');
  else if (current.audience_id !== null) await checkSegmentHoldout(trx, page, current.audience_id);
  const at = now();
  const row: ExperimentsTable = {
    ...current,
    status: 'running',
    started_at: at,
    next_reweigh_at: current.allocation === 'bandit' ? new Date(Date.parse(at) + BANDIT_EVERY_MS).toISOString() : null,
    updated_at: after(current.updated_at),
  };
  const updated = await trx
    .updateTable('experiments')
    .set({ status: row.status, started_at: row.started_at, next_reweigh_at: row.next_reweigh_at, updated_at: row.updated_at })
    .where('id', '=', current.id)
    .where('status', '=', 'draft')
    .executeTakeFirst();
  if (updated.numUpdatedRows === 0n) throw conflict('The experiment was changed by another request; read it again and retry');
  await startPeriod(trx, current.id, arms, 'start');
  await scheduleLooks(trx, current.id);
  const experiment = toExperiment(row);
  await emit(trx, page.tenant_id, 'experiment.started', experiment);
  return experiment;
}

/** A started experiment is looked at from the next round (looks.ts records its first winner). */
export async function scheduleLooks(trx: Kysely<Database>, experimentId: string): Promise<void> {
  await trx
    .insertInto('experiment_looks')
    .values({ experiment_id: experimentId, next_look_at: now() })
    .onConflict((oc) => oc.column('experiment_id').doNothing())
    .execute();
}
