import { type Kysely, type Transaction, sql } from 'kysely';
import type { AudiencesTable, AudienceVersionsTable, Database } from '../db/types.js';
import { emit } from '../events/index.js';
import { AppError, conflict, type FieldError, invalidField } from '../http/errors.js';
import { keysetList, type ListQueryParams } from '../http/pagination.js';
import { settle } from '../http/round-trip.js';
import { newId } from '../ids.js';
import { type Content, checkContent, findPage } from '../pages/index.js';
import { now } from '../time.js';
import { moveVersion } from './publishing.js';
import { toVersion } from './version-row.js';
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
