import { sql, type Kysely, type Transaction } from 'kysely';
import type { VersionStatus } from '../db/enums.js';
import type { AudiencesTable, AudienceVersionsTable, Database, PagesTable } from '../db/types.js';
import { isUniqueViolation } from '../db/errors.js';
import { AppError, conflict, type FieldError, invalidField } from '../http/errors.js';
import { keysetList, type ListQueryParams, NEWEST_FIRST } from '../http/pagination.js';
import { newId } from '../ids.js';
import { emit } from '../events/outbox.js';
import { fullMetadata, mergeMetadata, parseMetadata } from '../pages/metadata.js';
import { settle, throwIfAny } from '../http/round-trip.js';
import type { Content } from '../pages/schemas.js';
import { after, now } from '../time.js';
import { canMove, timesOfMove } from './lifecycle.js';
import { computedName } from './names.js';
import type { Audience, AudienceCreate, AudienceListQuery, AudienceVersion, VersionCreate } from './schemas.js';
import { AudienceUpdate, VERSION_MOVES, VersionUpdate } from './schemas.js';

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

/** The audience's own fields, its two versions, and the page's metadata under its override. */
function toAudience(
  row: AudiencesTable,
  latest: AudienceVersionsTable,
  published: AudienceVersionsTable,
  pageMetadata: string | null,
): Audience {
  const override = parseMetadata(row.metadata_override);
  const base = parseMetadata(pageMetadata);
  return {
    audienceId: row.id,
    pageId: row.page_id,
    computedName: row.computed_name,
    customName: row.custom_name,
    effectiveName: row.effective_name,
    status: row.archived_at !== null ? 'archived' : latest.status,
    flags: JSON.parse(row.flags) as Audience['flags'],
    isNewPageAgent: published.is_new_page_agent === 1,
    latestVersion: toVersion(latest),
    publishedVersion: toVersion(published),
    personId: row.person_id,
    personRouteKey: row.person_route_key,
    actionFormIdOverride: row.action_form_id_override,
    actionFormInstructionsOverride: row.action_form_instructions_override,
    actionUrlOverride: row.action_url_override,
    supplementaryContext: published.supplementary_context,
    ...(base !== null || override !== null ? { effectiveMetadata: fullMetadata(base, override) } : {}),
    ...(override !== null ? { metadataOverride: override } : {}),
    archivedAt: row.archived_at,
    createdAt: row.created_at,
  };
}

/** Maps audiences with their latest and published versions, read in one query for all of them. */
async function withVersions(db: Kysely<Database>, rows: AudiencesTable[], pageMetadata: string | null): Promise<Audience[]> {
  if (rows.length === 0) return [];
  const ids = [...new Set(rows.flatMap((r) => [r.latest_version_id, r.published_version_id]))];
  const versions = await db.selectFrom('audience_versions').selectAll().where('id', 'in', ids).execute();
  const byId = new Map(versions.map((v) => [v.id, v]));
  const version = (id: string) => {
    const found = byId.get(id);
    if (!found) throw new Error(`audience version ${id} is missing`);
    return found;
  };
  return rows.map((r) => toAudience(r, version(r.latest_version_id), version(r.published_version_id), pageMetadata));
}

export function findAudience(db: Kysely<Database>, tenantId: string, pageId: string, audienceId: string) {
  return db
    .selectFrom('audiences')
    .selectAll()
    .where('id', '=', audienceId)
    .where('page_id', '=', pageId)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
}

export async function getAudience(db: Kysely<Database>, page: PagesTable, audienceId: string): Promise<Audience | undefined> {
  const row = await findAudience(db, page.tenant_id, page.id, audienceId);
  return row && (await withVersions(db, [row], page.metadata))[0];
}

/** An audience starts with version 1, already published: an audience always has a published version. */
export async function createAudience(trx: Transaction<Database>, page: PagesTable, input: AudienceCreate): Promise<Audience> {
  const person = input.personId ? await personOf(trx, page.tenant_id, input.personId) : undefined;
  const errors: FieldError[] = [];
  const override =
    input.metadataOverride === undefined
      ? null
      : await mergeMetadata(trx, page.tenant_id, null, input.metadataOverride, '/metadataOverride', errors);
  throwIfAny(errors);
  const routeKey = input.personRouteKey ?? null;
  if (routeKey !== null) await checkRouteKeyFree(trx, page, routeKey, null);
  const homePage = (input.flags ?? []).includes('home_page');
  if (homePage) await takeHomePage(trx, page, null);
  const { audience_seq: number } = await trx
    .updateTable('pages')
    .set({ audience_seq: sql<number>`audience_seq + 1` })
    .where('id', '=', page.id)
    .returning('audience_seq')
    .executeTakeFirstOrThrow();
  const at = now();
  const audienceId = newId('audience');
  const version: AudienceVersionsTable = {
    id: newId('version'),
    tenant_id: page.tenant_id,
    audience_id: audienceId,
    version_number: 1,
    status: 'published',
    is_new_page_agent: input.isNewPageAgent ? 1 : 0,
    supplementary_context: input.supplementaryContext ?? null,
    content: null,
    queue_duration_ms: null,
    created_at: at,
    became_draft_at: null,
    queued_at: null,
    published_at: at,
    cancelled_at: null,
    obsolete_at: null,
    archived_at: null,
    ...AGENT_FRESH,
  };
  const computed = computedName(number, person);
  const effective = input.customName ?? computed;
  const row: AudiencesTable = {
    id: audienceId,
    tenant_id: page.tenant_id,
    page_id: page.id,
    number,
    custom_name: input.customName ?? null,
    computed_name: computed,
    effective_name: effective,
    effective_name_lc: effective.toLowerCase(),
    page_name: page.name,
    page_name_lc: page.name.toLowerCase(),
    page_deleted: 0,
    person_id: input.personId ?? null,
    person_route_key: routeKey,
    flags: JSON.stringify(input.flags ?? []),
    home_page: homePage ? 1 : 0,
    action_form_id_override: input.actionFormIdOverride ?? null,
    action_form_instructions_override: input.actionFormInstructionsOverride ?? null,
    action_url_override: input.actionUrlOverride ?? null,
    metadata_override: override === null ? null : JSON.stringify(override),
    version_seq: 1,
    latest_version_id: version.id,
    published_version_id: version.id,
    archived_at: null,
    created_at: at,
    updated_at: at,
    erased_at: null,
    erased_route_key: null,
  };
  await trx.insertInto('audiences').values(row).execute();
  await trx.insertInto('audience_versions').values(version).execute();
  const audience = toAudience(row, version, version, page.metadata);
  await emit(trx, page.tenant_id, 'audience.created', audience);
  return audience;
}

const audiencesList = keysetList({ name: 'audiences', table: 'audiences', ...NEWEST_FIRST });

export async function listAudiences(db: Kysely<Database>, page: PagesTable, query: AudienceListQuery) {
  const status = query.status;
  const filters = { status: status ?? null };
  // Without a status, the live audiences; `archived`, the archived ones; any other, the live ones whose latest version has it.
  const ofPage = db
    .selectFrom('audiences')
    .where('audiences.page_id', '=', page.id)
    .where('audiences.tenant_id', '=', page.tenant_id)
    .where('audiences.archived_at', status === 'archived' ? 'is not' : 'is', null)
    .$call((q) =>
      status === undefined || status === 'archived'
        ? q
        : q.where((eb) =>
            eb.exists(
              eb
                .selectFrom('audience_versions')
                .select('audience_versions.id')
                .whereRef('audience_versions.id', '=', 'audiences.latest_version_id')
                .where('audience_versions.status', '=', status),
            ),
          ),
    );
  const result = await audiencesList.read({
    query,
    within: page.id,
    filters,
    rows: ofPage.selectAll('audiences'),
    count: ofPage,
    map: (r) => r,
  });
  return { ...result, items: await withVersions(db, result.items, page.metadata) };
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

async function personOf(db: Kysely<Database>, tenantId: string, personId: string) {
  const person = await db
    .selectFrom('persons')
    .select(['name', 'domain'])
    .where('id', '=', personId)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  if (!person) throw invalidField('/personId', 'is not a person of this tenant');
  return person;
}

const routeKeyTaken = (key: string) =>
  new AppError('conflict', `Another live audience of this page has personRouteKey "${key}"`, [
    { path: '/personRouteKey', message: 'is already the route key of another live audience of this page' },
  ]);

/**
 * Route keys are unique among a page's live audiences. Checked here for a clear answer; the
 * partial unique index `audiences_route_key_uq` is what holds under concurrent writers.
 */
async function checkRouteKeyFree(db: Kysely<Database>, page: PagesTable, key: string, audienceId: string | null) {
  const holder = await db
    .selectFrom('audiences')
    .select('id')
    .where('page_id', '=', page.id)
    .where('person_route_key', '=', key)
    .where('archived_at', 'is', null)
    .$if(audienceId !== null, (q) => q.where('id', '!=', audienceId as string))
    .executeTakeFirst();
  if (holder) throw routeKeyTaken(key);
}

/** At most one live audience of a page carries `home_page`: whoever takes it, takes it from the other. */
async function takeHomePage(trx: Transaction<Database>, page: PagesTable, audienceId: string | null) {
  const at = now();
  const others = await trx
    .updateTable('audiences')
    .set({ home_page: 0, flags: '[]', updated_at: at })
    .where('page_id', '=', page.id)
    .where('home_page', '=', 1)
    .where('archived_at', 'is', null)
    .$if(audienceId !== null, (q) => q.where('id', '!=', audienceId as string))
    .returningAll()
    .execute();
  for (const audience of await withVersions(trx, others, page.metadata)) {
    await emit(trx, page.tenant_id, 'audience.updated', audience);
  }
}

/**
 * A unique index refused the write: a concurrent request took the route key or the home page
 * between the check and the write (PostgreSQL only; SQLite's writes are serialized). PostgreSQL
 * names the index that refused.
 */
function audienceConflict(err: unknown, routeKey: string | null): AppError | undefined {
  if (!isUniqueViolation(err)) return undefined;
  const index = (err as { constraint?: unknown }).constraint;
  if (index === 'audiences_route_key_uq' && routeKey !== null) return routeKeyTaken(routeKey);
  if (index === 'audiences_home_page_uq') {
    return new AppError('conflict', 'A concurrent request changed the home page of this page; read the audiences again and retry', [
      { path: '/flags', message: 'was changed by a concurrent request' },
    ]);
  }
  return undefined;
}

/**
 * Only the fields present change. A new person or custom name recomputes the names; a metadata
 * override is merged field by field into the stored one (null clears it).
 */
export async function updateAudience(
  trx: Transaction<Database>,
  page: PagesTable,
  current: AudiencesTable,
  body: AudienceUpdate,
): Promise<Audience> {
  const shown = await toAudienceWithVersions(trx, current, page);
  const patch = settle(AudienceUpdate, body, shown);
  const changes: Partial<AudiencesTable> = {};
  if (patch.personId !== undefined) {
    const person = patch.personId === null ? undefined : await personOf(trx, page.tenant_id, patch.personId);
    changes.person_id = patch.personId;
    changes.computed_name = computedName(current.number, person);
  }
  if (patch.customName !== undefined) changes.custom_name = patch.customName;
  if (patch.personId !== undefined || patch.customName !== undefined) {
    const effective =
      (patch.customName !== undefined ? patch.customName : current.custom_name) ?? changes.computed_name ?? current.computed_name;
    changes.effective_name = effective;
    changes.effective_name_lc = effective.toLowerCase();
  }
  const routeKey = patch.personRouteKey !== undefined ? patch.personRouteKey : current.person_route_key;
  if (patch.personRouteKey !== undefined) {
    if (patch.personRouteKey !== null && current.archived_at === null) await checkRouteKeyFree(trx, page, patch.personRouteKey, current.id);
    changes.person_route_key = patch.personRouteKey;
  }
  if (patch.flags !== undefined) {
    const homePage = patch.flags.includes('home_page');
    if (homePage && current.archived_at === null) await takeHomePage(trx, page, current.id);
    changes.flags = JSON.stringify(patch.flags);
    changes.home_page = homePage ? 1 : 0;
  }
  if (patch.actionFormIdOverride !== undefined) changes.action_form_id_override = patch.actionFormIdOverride;
  if (patch.actionFormInstructionsOverride !== undefined) changes.action_form_instructions_override = patch.actionFormInstructionsOverride;
  if (patch.actionUrlOverride !== undefined) changes.action_url_override = patch.actionUrlOverride;
  if (patch.metadataOverride !== undefined) {
    const errors: FieldError[] = [];
    const stored = parseMetadata(current.metadata_override);
    const override =
      patch.metadataOverride === null
        ? null
        : await mergeMetadata(trx, page.tenant_id, stored, patch.metadataOverride, '/metadataOverride', errors);
    throwIfAny(errors);
    changes.metadata_override = override === null ? null : JSON.stringify(override);
  }
  if (Object.keys(changes).length === 0) return shown;
  changes.updated_at = after(current.updated_at);
  let row: AudiencesTable;
  try {
    row = await trx
      .updateTable('audiences')
      .set(changes)
      .where('id', '=', current.id)
      .where('tenant_id', '=', page.tenant_id)
      .returningAll()
      .executeTakeFirstOrThrow();
  } catch (err) {
    throw audienceConflict(err, routeKey) ?? err;
  }
  const audience = await toAudienceWithVersions(trx, row, page);
  await emit(trx, page.tenant_id, 'audience.updated', audience);
  return audience;
}

async function toAudienceWithVersions(db: Kysely<Database>, row: AudiencesTable, page: PagesTable): Promise<Audience> {
  const [audience] = await withVersions(db, [row], page.metadata);
  if (!audience) throw new Error('an audience maps to itself');
  return audience;
}

/** Archiving frees the route key and the home page flag for the page's other audiences; the values stay on it. */
export async function archiveAudience(trx: Transaction<Database>, page: PagesTable, current: AudiencesTable): Promise<Audience> {
  if (current.archived_at !== null) return toAudienceWithVersions(trx, current, page);
  const at = now();
  const row = await trx
    .updateTable('audiences')
    .set({ archived_at: at, updated_at: after(current.updated_at) })
    .where('id', '=', current.id)
    .where('archived_at', 'is', null)
    .returningAll()
    .executeTakeFirstOrThrow();
  const audience = await toAudienceWithVersions(trx, row, page);
  await emit(trx, page.tenant_id, 'audience.archived', audience);
  return audience;
}

/**
 * Back to live, with its route key if no live audience took it meanwhile (409 otherwise). Its
 * home page flag comes back only if no other live audience holds the page's home page now: a
 * restore never takes it from another audience silently. An audience archived by the erasure of
 * its person stays archived (409): it holds nothing to show any more.
 */
export async function restoreAudience(trx: Transaction<Database>, page: PagesTable, current: AudiencesTable): Promise<Audience> {
  if (current.archived_at === null) return toAudienceWithVersions(trx, current, page);
  if (current.erased_at !== null) throw conflict('the audience was archived by the erasure of its person; it cannot be restored');
  if (current.person_route_key !== null) await checkRouteKeyFree(trx, page, current.person_route_key, current.id);
  const changes: Partial<AudiencesTable> = { archived_at: null, updated_at: after(current.updated_at) };
  if (current.home_page === 1) {
    const holder = await trx
      .selectFrom('audiences')
      .select('id')
      .where('page_id', '=', page.id)
      .where('home_page', '=', 1)
      .where('archived_at', 'is', null)
      .executeTakeFirst();
    if (holder) {
      const flags = (JSON.parse(current.flags) as string[]).filter((f) => f !== 'home_page');
      changes.flags = JSON.stringify(flags);
      changes.home_page = 0;
    }
  }
  let row: AudiencesTable;
  try {
    row = await trx.updateTable('audiences').set(changes).where('id', '=', current.id).returningAll().executeTakeFirstOrThrow();
  } catch (err) {
    throw audienceConflict(err, current.person_route_key) ?? err;
  }
  const audience = await toAudienceWithVersions(trx, row, page);
  await emit(trx, page.tenant_id, 'audience.restored', audience);
  return audience;
}

/** The row of a new draft version of `audience`, with what it carries over (from the latest version, or the request). */
function draftRow(
  audience: Pick<AudiencesTable, 'id' | 'tenant_id'>,
  id: string,
  versionNumber: number,
  at: string,
  carried: Pick<AudienceVersionsTable, 'is_new_page_agent' | 'supplementary_context' | 'content'>,
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

/** A new draft with the next number; fields not given are carried over from the latest version. */
export async function createVersion(trx: Transaction<Database>, audience: AudiencesTable, input: VersionCreate): Promise<AudienceVersion> {
  const latest = await trx
    .selectFrom('audience_versions')
    .selectAll()
    .where('id', '=', audience.latest_version_id)
    .executeTakeFirstOrThrow();
  const at = now();
  const versionId = newId('version');
  const { version_seq: versionNumber } = await trx
    .updateTable('audiences')
    .set({ version_seq: sql<number>`version_seq + 1`, latest_version_id: versionId, updated_at: at })
    .where('id', '=', audience.id)
    .returning('version_seq')
    .executeTakeFirstOrThrow();
  const version = draftRow(audience, versionId, versionNumber, at, {
    is_new_page_agent: input?.isNewPageAgent !== undefined ? (input.isNewPageAgent ? 1 : 0) : latest.is_new_page_agent,
    supplementary_context: input?.supplementaryContext !== undefined ? input.supplementaryContext : latest.supplementary_context,
    content: input?.content !== undefined ? contentText(input.content) : latest.content,
  });
  await trx.insertInto('audience_versions').values(version).execute();
  const created = toVersion(version);
  await emit(trx, audience.tenant_id, 'audience_version.created', created);
  return created;
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
    const archived = await trx
      .updateTable('audience_versions')
      .set({ status: 'archived', obsolete_at: at, archived_at: at })
      .where('audience_id', '=', audience.id)
      .where('status', '=', 'published')
      .where('version_number', '<', moved.version_number)
      .returningAll()
      .execute();
    for (const version of archived) {
      await emit(trx, audience.tenant_id, 'audience_version.status_changed', toVersion(version), { previousStatus: 'published' });
    }
    const newest = await trx
      .selectFrom('audience_versions')
      .select('id')
      .where('audience_id', '=', audience.id)
      .where('status', '=', 'published')
      .orderBy('version_number', 'desc')
      .limit(1)
      .executeTakeFirstOrThrow();
    await trx.updateTable('audiences').set({ published_version_id: newest.id, updated_at: at }).where('id', '=', audience.id).execute();
    // The page now serves this version to the audience: one event for whoever only cares about that.
    const { page_id: pageId } = await trx.selectFrom('audiences').select('page_id').where('id', '=', audience.id).executeTakeFirstOrThrow();
    await emit(trx, audience.tenant_id, 'page.version.published', toVersion(moved), { pageId });
  }
  return toVersion(moved);
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
  const updated = await trx
    .updateTable('audience_versions')
    .set({ content: contentText(content) })
    .where('id', '=', version.id)
    .where('status', '=', 'draft')
    .returningAll()
    .executeTakeFirst();
  if (!updated) throw conflict('The version was changed by another request; read it again and retry');
  await emit(trx, audience.tenant_id, 'audience_version.updated', toVersion(updated));
  return updated;
}

/**
 * Queues a new version of each audience (one batch of a regenerate request), carrying over the
 * latest version's `supplementaryContext`, `isNewPageAgent` and content: created as a draft and
 * moved to queued by the lifecycle's rules, with the two events a client's create and PATCH give.
 * A batch is a few statements whatever its size (one insert, two updates, the events).
 *
 * `regenerationKey` (a keyed request's) skips the audiences it already queued a version of, and
 * a unique index holds that against a concurrent copy of the request: its batch is refused with
 * 409 `idempotency_key_in_progress`. Returns how many versions were queued.
 */
export async function queueNewVersions(
  trx: Transaction<Database>,
  audiences: AudiencesTable[],
  regenerationKey: string | null,
): Promise<number> {
  if (audiences.length === 0) return 0;
  let todo = audiences;
  if (regenerationKey !== null) {
    const done = await trx
      .selectFrom('audience_versions')
      .select('audience_id')
      .where('regeneration_key', '=', regenerationKey)
      .where(
        'audience_id',
        'in',
        audiences.map((a) => a.id),
      )
      .execute();
    const skip = new Set(done.map((d) => d.audience_id));
    todo = audiences.filter((a) => !skip.has(a.id));
    if (todo.length === 0) return 0;
  }
  const ids = todo.map((a) => a.id);
  const latest = await trx
    .selectFrom('audience_versions')
    .selectAll()
    .where(
      'id',
      'in',
      todo.map((a) => a.latest_version_id),
    )
    .execute();
  const latestById = new Map(latest.map((v) => [v.id, v]));
  const at = now();
  const numbers = await trx
    .updateTable('audiences')
    .set({ version_seq: sql<number>`version_seq + 1`, updated_at: at })
    .where('id', 'in', ids)
    .returning(['id', 'version_seq'])
    .execute();
  const numberOf = new Map(numbers.map((n) => [n.id, Number(n.version_seq)]));
  const drafts: AudienceVersionsTable[] = todo.map((audience) => {
    const previous = latestById.get(audience.latest_version_id);
    const number = numberOf.get(audience.id);
    if (!previous || number === undefined) throw new Error(`audience ${audience.id} lost its latest version`);
    return { ...draftRow(audience, newId('version'), number, at, previous), regeneration_key: regenerationKey };
  });
  const queued = drafts.map(
    (draft): AudienceVersionsTable => ({ ...draft, status: 'queued', ...timesOfMove('draft', 'queued', draft, at) }),
  );
  try {
    // Chunks keep each statement under either database's limit on bound parameters.
    for (let i = 0; i < queued.length; i += 200) {
      await trx
        .insertInto('audience_versions')
        .values(queued.slice(i, i + 200))
        .execute();
    }
  } catch (err) {
    if (regenerationKey !== null && isUniqueViolation(err)) {
      throw new AppError(
        'idempotency_key_in_progress',
        'A request with this Idempotency-Key is still in progress; retry shortly',
        undefined,
        {
          'retry-after': '1',
        },
      );
    }
    throw err;
  }
  await trx
    .updateTable('audiences')
    .set((eb) => ({
      latest_version_id: eb
        .selectFrom('audience_versions as v')
        .select('v.id')
        .whereRef('v.audience_id', '=', 'audiences.id')
        .whereRef('v.version_number', '=', 'audiences.version_seq'),
    }))
    .where('id', 'in', ids)
    .execute();
  for (const [i, draft] of drafts.entries()) {
    await emit(trx, draft.tenant_id, 'audience_version.created', toVersion(draft));
    await emit(trx, draft.tenant_id, 'audience_version.status_changed', toVersion(queued[i] as AudienceVersionsTable), {
      previousStatus: 'draft',
    });
  }
  return queued.length;
}

/** How many versions a keyed regenerate request has queued (its answer, also after a retry). */
export async function countRegenerated(db: Kysely<Database>, regenerationKey: string): Promise<number> {
  const row = await db
    .selectFrom('audience_versions')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('regeneration_key', '=', regenerationKey)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * A request key is remembered 24 hours: versions older than that no longer count as its work, so a
 * key used again after it expired is a new request (they keep everything else).
 */
export async function forgetRegenerations(trx: Kysely<Database>, regenerationKey: string, olderThan: string): Promise<void> {
  await trx
    .updateTable('audience_versions')
    .set({ regeneration_key: null })
    .where('regeneration_key', '=', regenerationKey)
    .where('created_at', '<', olderThan)
    .execute();
}

/** Live audiences of the page after `afterId` (by id), up to `limit`: the batches of "every live audience". */
export function liveAudiencesAfter(db: Kysely<Database>, page: PagesTable, afterId: string | null, limit: number) {
  return db
    .selectFrom('audiences')
    .selectAll()
    .where('page_id', '=', page.id)
    .where('tenant_id', '=', page.tenant_id)
    .where('archived_at', 'is', null)
    .$if(afterId !== null, (q) => q.where('id', '>', afterId as string))
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** The live audiences of the page among `ids` (any order; ids of others are simply absent). */
export function liveAudiencesAmong(db: Kysely<Database>, page: PagesTable, ids: readonly string[]) {
  return db
    .selectFrom('audiences')
    .selectAll()
    .where('page_id', '=', page.id)
    .where('tenant_id', '=', page.tenant_id)
    .where('archived_at', 'is', null)
    .where('id', 'in', ids)
    .execute();
}
