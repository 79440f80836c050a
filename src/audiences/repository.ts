import { sql, type Kysely, type Transaction } from 'kysely';
import { batchedReads } from '../db/batch.js';
import { prepared } from '../db/prepared.js';
import type { AudiencesTable, AudienceVersionsTable, Database, PagesTable } from '../db/types.js';
import { emit } from '../events/index.js';
import type { FieldError } from '../http/errors.js';
import { keysetList, NEWEST_FIRST } from '../http/pagination.js';
import { settle, throwIfAny } from '../http/round-trip.js';
import { newId } from '../ids.js';
import { fullMetadata, mergeMetadata, parseMetadata, nextAudienceNumber } from '../pages/index.js';
import { after, now } from '../time.js';
import { computedName } from './names.js';
import type { Audience, AudienceCreate, AudienceListQuery } from './schemas.js';
import { AudienceUpdate } from './schemas.js';
import { toVersion } from './version-row.js';
import { firstVersionRow } from './versions.js';
import { parseRules } from './rules.js';
import { audienceConflict, checkRouteKeyFree, checkSegmentRoom, personOf, segmentOf } from './claims.js';
import type { OriginOf } from '../http/public-origin.js';

// The visitor plane reads a version by this path (src/site/); versions.ts is where it lives.
export { findVersion } from './versions.js';
// Other areas' small questions about audiences, answered in lookups.ts and asked by this path.
export { audienceIdsAmong, audienceRowsByIds, audienceRulesOf, isAudienceOfPage, liveAudienceRules } from './lookups.js';

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
    rules: parseRules(row.rules),
    priority: row.priority,
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

export function findAudience(
  db: Kysely<Database>,
  tenantId: string,
  pageId: string,
  audienceId: string,
): Promise<AudiencesTable | undefined> {
  return readAudience(db, { tenantId, pageId, audienceId });
}

/** One audience by id, as the API and the served page read it: shared statements on PostgreSQL (db/batch.ts). */
const readAudience = batchedReads({
  id: (key: { tenantId: string; pageId: string; audienceId: string }) => `${key.tenantId} ${key.pageId} ${key.audienceId}`,
  rowId: (row: AudiencesTable) => `${row.tenant_id} ${row.page_id} ${row.id}`,
  one: async (db, key) => (await audienceById(db, key))[0],
  many: (db, keys) =>
    audiencesByIds(db, {
      tenantIds: keys.map((k) => k.tenantId),
      pageIds: keys.map((k) => k.pageId),
      audienceIds: keys.map((k) => k.audienceId),
    }),
});

const audienceById = prepared((db, p: { tenantId: string; pageId: string; audienceId: string }) =>
  db.selectFrom('audiences').selectAll().where('id', '=', p.audienceId).where('page_id', '=', p.pageId).where('tenant_id', '=', p.tenantId),
);
const audiencesByIds = prepared((db, p: { tenantIds: string[]; pageIds: string[]; audienceIds: string[] }) =>
  db
    .selectFrom('audiences')
    .selectAll()
    .where(
      sql`(tenant_id, page_id, id)`,
      'in',
      sql`(select * from unnest(cast(${p.tenantIds} as text[]), cast(${p.pageIds} as text[]), cast(${p.audienceIds} as text[])))`,
    ),
);

/** A version by id (the audience's latest or published one), shared the same way. */
const readVersion = batchedReads({
  id: (versionId: string) => versionId,
  rowId: (row: AudienceVersionsTable) => row.id,
  one: async (db, versionId) => (await versionById(db, { versionId }))[0],
  many: (db, versionIds) => versionsByIds(db, { versionIds }),
});

const versionById = prepared((db, p: { versionId: string }) =>
  db.selectFrom('audience_versions').selectAll().where('id', '=', p.versionId),
);
const versionsByIds = prepared((db, p: { versionIds: string[] }) =>
  db.selectFrom('audience_versions').selectAll().where('id', '=', sql<string>`any(cast(${p.versionIds} as text[]))`),
);

/** The page's live home audience (what a visit no segment matches gets), if it has one. */
export function findHomeAudience(db: Kysely<Database>, tenantId: string, pageId: string) {
  return db
    .selectFrom('audiences')
    .selectAll()
    .where('page_id', '=', pageId)
    .where('tenant_id', '=', tenantId)
    .where('home_page', '=', 1)
    .where('archived_at', 'is', null)
    .where('person_id', 'is', null)
    .executeTakeFirst();
}

export async function getAudience(db: Kysely<Database>, page: PagesTable, audienceId: string): Promise<Audience | undefined> {
  const row = await findAudience(db, page.tenant_id, page.id, audienceId);
  if (!row) return undefined;
  const reading = readVersion(db, row.latest_version_id);
  const same = row.published_version_id === row.latest_version_id;
  const [latest, published] = await Promise.all([reading, same ? reading : readVersion(db, row.published_version_id)]);
  if (!latest || !published) throw new Error(`a version of audience ${row.id} is missing`);
  return toAudience(row, latest, published, page.metadata);
}

/** An audience starts with version 1, already published: an audience always has a published version. */
/** `originOf` makes the URLs of the images the request names (pages/images.ts). */
export async function createAudience(
  trx: Transaction<Database>,
  page: PagesTable,
  input: AudienceCreate,
  originOf: OriginOf,
): Promise<Audience> {
  const rules = segmentOf(input.rules ?? null, input.priority, input.personId ?? null);
  if (rules.rules !== null) await checkSegmentRoom(trx, page, null, '/rules');
  const person = input.personId ? await personOf(trx, page.tenant_id, input.personId) : undefined;
  const errors: FieldError[] = [];
  const override =
    input.metadataOverride === undefined
      ? null
      : await mergeMetadata(trx, page.tenant_id, null, input.metadataOverride, '/metadataOverride', errors, originOf);
  throwIfAny(errors);
  const routeKey = input.personRouteKey ?? null;
  if (routeKey !== null) await checkRouteKeyFree(trx, page, routeKey, null);
  const homePage = (input.flags ?? []).includes('home_page');
  if (homePage) await takeHomePage(trx, page, null);
  const number = await nextAudienceNumber(trx, page.id);
  const at = now();
  const audienceId = newId('audience');
  const version = firstVersionRow({ id: audienceId, tenant_id: page.tenant_id }, at, {
    is_new_page_agent: input.isNewPageAgent ? 1 : 0,
    supplementary_context: input.supplementaryContext ?? null,
  });
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
    rules: rules.rules,
    priority: rules.priority,
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
  const kind = query.kind;
  const filters = { status: status ?? null, ...(kind ? { kind } : {}) };
  // Without a status, the live audiences; `archived`, the archived ones; any other, the live ones whose latest version has it.
  const ofPage = db
    .selectFrom('audiences')
    .where('audiences.page_id', '=', page.id)
    .where('audiences.tenant_id', '=', page.tenant_id)
    .where('audiences.archived_at', status === 'archived' ? 'is not' : 'is', null)
    .$if(kind === 'segment', (q) => q.where('audiences.rules', 'is not', null))
    .$if(kind === 'person', (q) => q.where('audiences.person_id', 'is not', null))
    .$if(kind === 'home', (q) => q.where('audiences.home_page', '=', 1))
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
 * Only the fields present change. A new person or custom name recomputes the names; a metadata
 * override is merged field by field into the stored one (null clears it).
 */
export async function updateAudience(
  trx: Transaction<Database>,
  page: PagesTable,
  current: AudiencesTable,
  body: AudienceUpdate,
  originOf: OriginOf,
): Promise<Audience> {
  const shown = await toAudienceWithVersions(trx, current, page);
  const patch = settle(AudienceUpdate, body, shown);
  const changes: Partial<AudiencesTable> = {};
  if (patch.rules !== undefined || patch.priority !== undefined || (patch.personId ?? null) !== null) {
    const rules = patch.rules !== undefined ? patch.rules : parseRules(current.rules);
    const personId = patch.personId !== undefined ? patch.personId : current.person_id;
    const priority = patch.priority !== undefined ? patch.priority : rules === null ? undefined : (current.priority ?? undefined);
    const segment = segmentOf(rules, priority, personId);
    if (segment.rules !== null && current.rules === null && current.archived_at === null) {
      await checkSegmentRoom(trx, page, current.id, '/rules');
    }
    if (segment.rules !== current.rules) changes.rules = segment.rules;
    if (segment.priority !== current.priority) changes.priority = segment.priority;
  }
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
        : await mergeMetadata(trx, page.tenant_id, stored, patch.metadataOverride, '/metadataOverride', errors, originOf);
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

export async function toAudienceWithVersions(db: Kysely<Database>, row: AudiencesTable, page: PagesTable): Promise<Audience> {
  const [audience] = await withVersions(db, [row], page.metadata);
  if (!audience) throw new Error('an audience maps to itself');
  return audience;
}
