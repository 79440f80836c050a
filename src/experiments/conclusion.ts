import type { Transaction } from 'kysely';
import { moveVersion, toVersion } from '../audiences/versions.js';
import type { Database, ExperimentsTable, PagesTable } from '../db/types.js';
import { emit } from '../events/outbox.js';
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
    await publishWinner(trx, page, current.audience_id, arm.versionId);
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

/**
 * The winner's version becomes the audience's published one: a draft is published (which archives
 * the older published versions); a newer published version than the winner is archived too, so the
 * winner is what the audience serves afterwards.
 */
async function publishWinner(trx: Transaction<Database>, page: PagesTable, audienceId: string, versionId: string): Promise<void> {
  const audience = await trx
    .selectFrom('audiences')
    .select(['id', 'tenant_id', 'published_version_id'])
    .where('id', '=', audienceId)
    .where('page_id', '=', page.id)
    .executeTakeFirst();
  const version = await trx.selectFrom('audience_versions').selectAll().where('id', '=', versionId).executeTakeFirst();
  if (!audience || !version) throw conflict("The winner's version no longer exists");
  if (version.status !== 'published') await moveVersion(trx, audience, version, 'published');
  const at = now();
  const newer = await trx
    .updateTable('audience_versions')
    .set({ status: 'archived', obsolete_at: at, archived_at: at })
    .where('audience_id', '=', audience.id)
    .where('status', '=', 'published')
    .where('id', '<>', version.id)
    .returningAll()
    .execute();
  for (const archived of newer)
    await emit(trx, audience.tenant_id, 'audience_version.status_changed', toVersion(archived), { previousStatus: 'published' });
  if (newer.length > 0 || audience.published_version_id !== version.id)
    await trx.updateTable('audiences').set({ published_version_id: version.id, updated_at: at }).where('id', '=', audience.id).execute();
}
