import { type Kysely, type Transaction, sql } from 'kysely';
import type { VersionStatus } from '../db/enums.js';
import type { AudiencesTable, AudienceVersionsTable, Database } from '../db/types.js';
import { emit, emitMany, type EventToEmit } from '../events/index.js';
import { AppError, conflict, type FieldError, invalidField } from '../http/errors.js';
import { keysetList, type ListQueryParams } from '../http/pagination.js';
import { settle } from '../http/round-trip.js';
import { newId } from '../ids.js';
import { type Content, checkContent, findPage } from '../pages/index.js';
import { now } from '../time.js';
import { canMove, timesOfMove } from './lifecycle.js';
import type { AudienceVersion, VersionCreate } from './schemas.js';
import { VERSION_MOVES, VersionUpdate } from './schemas.js';

/** The agent's columns of a version it has not touched yet. */
const AGENT_FRESH = {
  failure_reason: null,
  agent_lease_until: null,
  agent_attempts: 0,
  agent_retry_at: null,
  regeneration_key: null,
} as const satisfies Partial<AudienceVersionsTable>;

const contentText = (content: Content | null) => (content === null ? null : JSON.stringify(content));

export function toVersion(row: AudienceVersionsTable): AudienceVersion {
  return {
    versionId: row.id,
    audienceId: row.audience_id,
    versionNumber: Number(row.version_number),
    status: row.status,
    isNewPageAgent: row.is_new_page_agent === 1,
    supplementaryContext: row.supplementary_context,
    content: row.content === null ? null : (JSON.parse(row.content) as Content),
    origin: row.origin,
    queueDurationMs: row.queue_duration_ms === null ? null : Number(row.queue_duration_ms),
    createdAt: row.created_at,
    becameDraftAt: row.became_draft_at,
    queuedAt: row.queued_at,
    publishedAt: row.published_at,
    cancelledAt: row.cancelled_at,
    obsoleteAt: row.obsolete_at,
    archivedAt: row.archived_at,
    failureReason: row.failure_reason,
  };
}

/** Version 1 of a new audience: published at once, so an audience always has a published version. */
export function firstVersionRow(
  audience: Pick<AudiencesTable, 'id' | 'tenant_id'>,
  at: string,
  carried: Pick<AudienceVersionsTable, 'is_new_page_agent' | 'supplementary_context'>,
): AudienceVersionsTable {
  return {
    ...draftRow(audience, newId('version'), 1, at, { ...carried, content: null, origin: 'generated' }),
    status: 'published',
    became_draft_at: null,
    published_at: at,
  };
}

/** The row of a new draft version of `audience`, with what it carries over (from the latest version, or the request). */
export function draftRow(
  audience: Pick<AudiencesTable, 'id' | 'tenant_id'>,
  id: string,
  versionNumber: number,
  at: string,
  carried: Pick<AudienceVersionsTable, 'is_new_page_agent' | 'supplementary_context' | 'content' | 'origin'>,
): AudienceVersionsTable {
  return {
    id,
    tenant_id: audience.tenant_id,
    audience_id: audience.id,
    version_number: versionNumber,
    status: 'draft',
    is_new_page_agent: carried.is_new_page_agent,
    supplementary_context: carried.supplementary_context,
    content: carried.content,
    origin: carried.origin,
    queue_duration_ms: null,
    created_at: at,
    became_draft_at: at,
    queued_at: null,
    published_at: null,
    cancelled_at: null,
    obsolete_at: null,
    archived_at: null,
    ...AGENT_FRESH,
  };
}

/** A version's number is unique within its audience (audience_versions_number_uq serves the order). */
const versionsList = keysetList({
  name: 'audience_versions',
  table: 'audience_versions',
  key: [{ column: 'version_number', kind: 'integer' }],
  direction: 'desc',
});

/** An audience's versions, newest first: its history as a timeline. */
export async function listVersions(db: Kysely<Database>, audience: AudiencesTable, query: ListQueryParams) {
  const ofAudience = db
    .selectFrom('audience_versions')
    .where('audience_versions.audience_id', '=', audience.id)
    .where('audience_versions.tenant_id', '=', audience.tenant_id);
  return versionsList.read({
    query,
    within: audience.id,
    rows: ofAudience.selectAll('audience_versions'),
    count: ofAudience,
    map: toVersion,
  });
}

/**
 * A new draft with the next number; fields not given are carried over from the latest version.
 * Content given makes it `written`; carried over, it keeps the origin of the version it came from.
 */
export async function createVersion(trx: Transaction<Database>, audience: AudiencesTable, input: VersionCreate): Promise<AudienceVersion> {
  const latest = await trx
    .selectFrom('audience_versions')
    .selectAll()
    .where('id', '=', audience.latest_version_id)
    .executeTakeFirstOrThrow();
  const written = input?.content !== undefined;
  if (written) await checkVersionContent(trx, audience, input.content ?? null);
  const version = await insertDraft(trx, audience, {
    is_new_page_agent: input?.isNewPageAgent !== undefined ? (input.isNewPageAgent ? 1 : 0) : latest.is_new_page_agent,
    supplementary_context: input?.supplementaryContext !== undefined ? input.supplementaryContext : latest.supplementary_context,
    content: written ? contentText(input.content ?? null) : latest.content,
    origin: written ? 'written' : latest.origin,
  });
  return toVersion(version);
}

/** Inserts the audience's next draft (it becomes its latest version), with `audience_version.created`. */
async function insertDraft(
  trx: Transaction<Database>,
  audience: AudiencesTable,
  carried: Parameters<typeof draftRow>[4],
): Promise<AudienceVersionsTable> {
  const at = now();
  const versionId = newId('version');
  const { version_seq: versionNumber } = await trx
    .updateTable('audiences')
    .set({ version_seq: sql<number>`version_seq + 1`, latest_version_id: versionId, updated_at: at })
    .where('id', '=', audience.id)
    .returning('version_seq')
    .executeTakeFirstOrThrow();
  const version = draftRow(audience, versionId, Number(versionNumber), at, carried);
  await trx.insertInto('audience_versions').values(version).execute();
  await emit(trx, audience.tenant_id, 'audience_version.created', toVersion(version));
  return version;
}

/**
 * Restore: a new version with `version`'s content (and the context the agent had), `written` (a
 * person chose it), published at once through the lifecycle, which archives the one before and
 * emits `page.version.published`. A version with no content of its own has nothing to restore.
 */
export async function restoreVersion(
  trx: Transaction<Database>,
  audience: AudiencesTable,
  version: AudienceVersionsTable,
): Promise<AudienceVersion> {
  if (version.content === null) {
    throw new AppError(
      'nothing_to_restore',
      `Version ${version.version_number} has no content of its own (it showed the page's content, or its content was erased)`,
    );
  }
  const draft = await insertDraft(trx, audience, {
    is_new_page_agent: version.is_new_page_agent,
    supplementary_context: version.supplementary_context,
    content: version.content,
    origin: 'written',
  });
  return moveVersion(trx, audience, draft, 'published');
}

export function findVersion(db: Kysely<Database>, audience: AudiencesTable, versionId: string) {
  return db
    .selectFrom('audience_versions')
    .selectAll()
    .where('id', '=', versionId)
    .where('audience_id', '=', audience.id)
    .where('tenant_id', '=', audience.tenant_id)
    .executeTakeFirst();
}

/** The audience's versions among `ids`, with their status: what an experiment's arms may serve. */
export function versionStatuses(db: Kysely<Database>, audience: AudiencesTable, ids: readonly string[]) {
  return db
    .selectFrom('audience_versions')
    .select(['id', 'status'])
    .where('audience_id', '=', audience.id)
    .where('id', 'in', ids)
    .execute();
}

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

/** A version's PATCH (the schema asks for one field at least): its content (only while it is a draft), then its move. */
export async function updateVersion(
  trx: Transaction<Database>,
  audience: AudiencesTable,
  version: AudienceVersionsTable,
  body: VersionUpdate,
): Promise<AudienceVersion> {
  const errors: FieldError[] = [];
  if (body.status === undefined && body.content === undefined) {
    for (const field of ['status', 'content']) errors.push({ path: `/${field}`, message: 'is required: status, content or both' });
  }
  const patch = settle(VersionUpdate, body, toVersion(version), errors);
  if (patch.status !== undefined && !(VERSION_MOVES as readonly string[]).includes(patch.status)) {
    throw invalidField('/status', `must be one of: ${VERSION_MOVES.join(', ')} (or the current status, which changes nothing)`);
  }
  const current = patch.content !== undefined ? await setDraftContent(trx, audience, version, patch.content) : version;
  return patch.status !== undefined ? moveVersion(trx, audience, current, patch.status) : toVersion(current);
}

async function setDraftContent(
  trx: Transaction<Database>,
  audience: AudiencesTable,
  version: AudienceVersionsTable,
  content: Content | null,
): Promise<AudienceVersionsTable> {
  if (version.status !== 'draft') {
    throw new AppError('conflict', `The version is ${version.status}; its content can only change while it is draft`, [
      { path: '/content', message: 'can only change while the version is draft' },
    ]);
  }
  await checkVersionContent(trx, audience, content);
  const updated = await trx
    .updateTable('audience_versions')
    .set({ content: contentText(content), origin: 'written' })
    .where('id', '=', version.id)
    .where('status', '=', 'draft')
    .returningAll()
    .executeTakeFirst();
  if (!updated) throw conflict('The version was changed by another request; read it again and retry');
  await emit(trx, audience.tenant_id, 'audience_version.updated', toVersion(updated));
  return updated;
}

/** A version's content as written: its layouts, the tenant's images, and (for a cta) the page's actions. */
async function checkVersionContent(trx: Transaction<Database>, audience: AudiencesTable, content: Content | null): Promise<void> {
  if (content === null) return;
  const page = await findPage(trx, audience.tenant_id, audience.page_id);
  const actions = page ? (JSON.parse(page.actions) as { actionId: string }[]) : [];
  await checkContent(
    trx,
    audience.tenant_id,
    content,
    actions.map((a) => a.actionId),
  );
}

/** A version of any audience of the page (the heatmap's `versionId`), or undefined. */
export function findPageVersion(db: Kysely<Database>, tenantId: string, pageId: string, versionId: string) {
  return db
    .selectFrom('audience_versions as v')
    .innerJoin('audiences as a', (join) => join.onRef('a.id', '=', 'v.audience_id').onRef('a.tenant_id', '=', 'v.tenant_id'))
    .select(['v.id', 'v.content'])
    .where('v.id', '=', versionId)
    .where('v.tenant_id', '=', tenantId)
    .where('a.page_id', '=', pageId)
    .executeTakeFirst();
}
