import type { Transaction } from 'kysely';
import { publishWinner } from '../audiences/index.js';
import type { Database, ExperimentsTable, PagesTable } from '../db/types.js';
import { emit } from '../events/index.js';
import { conflict, invalidField } from '../http/errors.js';
import { after, now } from '../time.js';
import { armsOf, toExperiment } from './repository.js';
import type { Experiment } from './schemas.js';

/**
 * running → concluded with the chosen arm. A `versions` experiment publishes the winner's version
 * through the audience lifecycle (the previous one is archived; `audience_version.status_changed`
 * and `page.version.published` are emitted); a holdout records the decision, and a
 * holdout won by `control` makes the page serve control until the next experiment or change
 * (src/experiments/serving.ts).
 */
export async function concludeExperiment(
  trx: Transaction<Database>,
  page: PagesTable,
  current: ExperimentsTable,
  winner: string,
): Promise<Experiment> {
  if (current.status !== 'running') throw conflict(`A ${current.status} experiment cannot be concluded; only a running one can`);
  const arms = armsOf(current);
  const arm = arms.find((a) => a.key === winner);
  if (!arm) throw invalidField('/winner', `is not an arm of this experiment (${arms.map((a) => a.key).join(', ')})`);
  if (current.kind === 'versions' && current.audience_id !== null && arm.versionId !== null)
    await publishWinner(trx, page.id, current.audience_id, arm.versionId);
  const at = now();
  const row: ExperimentsTable = {
    ...current,
    status: 'concluded',
    winner,
    concluded_at: at,
    next_reweigh_at: null,
    updated_at: after(current.updated_at),
  };
  const updated = await trx
    .updateTable('experiments')
    .set({ status: 'concluded', winner, concluded_at: at, next_reweigh_at: null, updated_at: row.updated_at })
    .where('id', '=', current.id)
    .where('status', '=', 'running')
    .executeTakeFirst();
  if (updated.numUpdatedRows === 0n) throw conflict('The experiment was changed by another request; read it again and retry');
  const experiment = toExperiment(row);
  await emit(trx, page.tenant_id, 'experiment.concluded', experiment);
  return experiment;
}
