import type { Transaction } from 'kysely';
import type { VersionStatus } from '../db/enums.js';
import type { AudiencesTable, AudienceVersionsTable, Database } from '../db/types.js';
import { emit, emitMany, type EventToEmit } from '../events/index.js';
import { conflict } from '../http/errors.js';
import { now } from '../time.js';
import { canMove, timesOfMove } from './lifecycle.js';
import type { AudienceVersion } from './schemas.js';
import { toVersion } from './version-row.js';

/**
 * Moves a version as the state machine allows (a move to its own status changes nothing).
 * Publishing archives the audience's older published versions and makes the newest published
 * one the audience's `publishedVersion`. The update is conditional on the status read, so a
 * concurrent move cannot be overwritten unseen.
 */
export async function moveVersion(
  trx: Transaction<Database>,
  audience: Pick<AudiencesTable, 'id' | 'tenant_id'>,
  version: AudienceVersionsTable,
  to: VersionStatus,
): Promise<AudienceVersion> {
  const from = version.status;
  if (from === to) return toVersion(version);
  if (!canMove(from, to)) throw conflict(`A ${from} version cannot become ${to}`);
  const at = now();
  const moved = await trx
    .updateTable('audience_versions')
    .set({ status: to, ...timesOfMove(from, to, version, at) })
    .where('id', '=', version.id)
    .where('status', '=', from)
    .returningAll()
    .executeTakeFirst();
  if (!moved) throw conflict('The version was changed by another request; read it again and retry');
  await emit(trx, audience.tenant_id, 'audience_version.status_changed', toVersion(moved), { previousStatus: from });
  if (to === 'published') {
    await archivePublished(trx, audience, at, { olderThan: moved.version_number });
    const newest = await trx
      .selectFrom('audience_versions')
      .select('id')
      .where('audience_id', '=', audience.id)
      .where('status', '=', 'published')
      .orderBy('version_number', 'desc')
      .limit(1)
      .executeTakeFirstOrThrow();
    await servePublished(trx, audience.id, newest.id, at);
    // The page now serves this version to the audience: one event for whoever only cares about that.
    const { page_id: pageId } = await trx.selectFrom('audiences').select('page_id').where('id', '=', audience.id).executeTakeFirstOrThrow();
    await emit(trx, audience.tenant_id, 'page.version.published', toVersion(moved), { pageId });
  }
  return toVersion(moved);
}

/**
 * What moveVersion does after it publishes, for many versions just moved together from `from` to
 * published (the agent's write of a batch): each audience's older published versions archived,
 * each audience serving its newest published one, and the events in moveVersion's order, version
 * by version (published, the versions it archived, `page.version.published`). A few statements for
 * the whole batch, where one at a time took eight each: the agent's publication bounded its rate.
 */
export async function publishedTogether(
  trx: Transaction<Database>,
  published: readonly AudienceVersionsTable[],
  from: VersionStatus,
  at: string,
): Promise<void> {
  if (published.length === 0) return;
  const ids = published.map((v) => v.id);
  const audienceIds = [...new Set(published.map((v) => v.audience_id))];
  const archived = await trx
    .updateTable('audience_versions')
    .set({ status: 'archived', obsolete_at: at, archived_at: at })
    .where('audience_id', 'in', audienceIds)
    .where('status', '=', 'published')
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('audience_versions as newer')
          .select('newer.id')
          .where('newer.id', 'in', ids)
          .whereRef('newer.audience_id', '=', 'audience_versions.audience_id')
          .whereRef('newer.version_number', '>', 'audience_versions.version_number'),
      ),
    )
    .returningAll()
    .execute();
  const served = await trx
    .updateTable('audiences')
    .set((eb) => ({
      published_version_id: eb
        .selectFrom('audience_versions as v')
        .select('v.id')
        .whereRef('v.audience_id', '=', 'audiences.id')
        .where('v.status', '=', 'published')
        .orderBy('v.version_number', 'desc')
        .limit(1),
      updated_at: at,
    }))
    .where('id', 'in', audienceIds)
    .returning(['id', 'page_id'])
    .execute();
  const pageOf = new Map(served.map((a) => [a.id, a.page_id]));
  const events: EventToEmit[] = [];
  const told = new Set<string>();
  for (const version of published) {
    const data = toVersion(version);
    events.push({ tenantId: version.tenant_id, type: 'audience_version.status_changed', data, extra: { previousStatus: from } });
    for (const old of archived) {
      if (old.audience_id !== version.audience_id || Number(old.version_number) >= Number(version.version_number)) continue;
      if (told.has(old.id)) continue;
      told.add(old.id);
      events.push({
        tenantId: old.tenant_id,
        type: 'audience_version.status_changed',
        data: toVersion(old),
        extra: { previousStatus: 'published' },
      });
    }
    events.push({ tenantId: version.tenant_id, type: 'page.version.published', data, extra: { pageId: pageOf.get(version.audience_id) } });
  }
  await emitMany(trx, events);
}

/**
 * Archives the audience's published versions older than a number, or all but one, with their
 * events; returns how many.
 */
async function archivePublished(
  trx: Transaction<Database>,
  audience: Pick<AudiencesTable, 'id' | 'tenant_id'>,
  at: string,
  keep: { olderThan: number } | { allBut: string },
): Promise<number> {
  const archived = await trx
    .updateTable('audience_versions')
    .set({ status: 'archived', obsolete_at: at, archived_at: at })
    .where('audience_id', '=', audience.id)
    .where('status', '=', 'published')
    .$call((q) => ('olderThan' in keep ? q.where('version_number', '<', keep.olderThan) : q.where('id', '<>', keep.allBut)))
    .returningAll()
    .execute();
  for (const version of archived) {
    await emit(trx, audience.tenant_id, 'audience_version.status_changed', toVersion(version), { previousStatus: 'published' });
  }
  return archived.length;
}

/** The published version the audience serves. */
async function servePublished(trx: Transaction<Database>, audienceId: string, versionId: string, at: string): Promise<void> {
  await trx.updateTable('audiences').set({ published_version_id: versionId, updated_at: at }).where('id', '=', audienceId).execute();
}

/**
 * An experiment's winner (src/experiments/conclusion.ts) becomes the audience's published version:
 * a draft is published through moveVersion (which archives the older published versions); a newer
 * published version than the winner is archived too, so the winner is what the audience serves
 * afterwards. 409 when the audience (of this page) or the version no longer exists.
 */
export async function publishWinner(trx: Transaction<Database>, pageId: string, audienceId: string, versionId: string): Promise<void> {
  const audience = await trx
    .selectFrom('audiences')
    .select(['id', 'tenant_id', 'published_version_id'])
    .where('id', '=', audienceId)
    .where('page_id', '=', pageId)
    .executeTakeFirst();
  const version = await trx.selectFrom('audience_versions').selectAll().where('id', '=', versionId).executeTakeFirst();
  if (!audience || !version) throw conflict("The winner's version no longer exists");
  if (version.status !== 'published') await moveVersion(trx, audience, version, 'published');
  const at = now();
  const newer = await archivePublished(trx, audience, at, { allBut: version.id });
  if (newer > 0 || audience.published_version_id !== version.id) await servePublished(trx, audience.id, version.id, at);
}
