import type { Kysely, Transaction, UpdateQueryBuilder, UpdateResult } from 'kysely';
import { TARGET_TYPES } from '../db/enums.js';
import { prepared } from '../db/prepared.js';
import { textSearch } from '../db/search/index.js';
import type { Database, PageLinksTable } from '../db/types.js';
import { fallbackDomainId, findDomain, findFallbackDomain } from '../domains/index.js';
import { AppError, conflict, conflictIfTaken, notFound, type FieldError } from '../http/errors.js';
import { keysetList, NEWEST_FIRST } from '../http/pagination.js';
import { newId } from '../ids.js';
import { emit } from '../events/index.js';
import { after, now } from '../time.js';
import { settle } from '../http/round-trip.js';
import type { PageLink, PageLinkCreate, PageLinkSearchQuery, PageLinkTarget } from './schemas.js';
import { PageLinkUpdate } from './schemas.js';

/** A link's row always holds the id its target type needs (creation and updates check it). */
function targetOf(row: PageLinksTable): PageLinkTarget {
  const id = row.target_type === 'audience' ? row.target_audience_id : row.target_page_id;
  if (id === null) throw new Error(`page link ${row.id} has no target id`);
  return row.target_type === 'audience' ? { targetType: 'audience', audienceId: id } : { targetType: row.target_type, pageId: id };
}

export const toPageLink = (row: PageLinksTable): PageLink => ({
  pageLinkId: row.id,
  tenantDomainId: row.tenant_domain_id,
  path: row.path,
  target: targetOf(row),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  deletedAt: row.deleted_at,
});

/**
 * The page a target leads to: an audience target needs an audience, the others a page, of this
 * tenant (and not of a deleted page). Every problem is added to `errors`; undefined when any.
 */
async function resolveTarget(
  db: Kysely<Database>,
  tenantId: string,
  target: PageLinkCreate['target'],
  errors: FieldError[],
): Promise<string | undefined> {
  const wanted = target.targetType === 'audience' ? 'audienceId' : 'pageId';
  const refused = target.targetType === 'audience' ? 'pageId' : 'audienceId';
  if (target[refused] !== undefined)
    errors.push({ path: `/target/${refused}`, message: `is not allowed for a ${target.targetType} target` });
  const id = target[wanted];
  if (id === undefined) {
    errors.push({ path: `/target/${wanted}`, message: `is required for a ${target.targetType} target` });
    return undefined;
  }
  const found =
    wanted === 'audienceId'
      ? await db
          .selectFrom('audiences')
          .select('page_id')
          .where('id', '=', id)
          .where('tenant_id', '=', tenantId)
          .where('page_deleted', '=', 0)
          .executeTakeFirst()
      : await db
          .selectFrom('pages')
          .select('id as page_id')
          .where('id', '=', id)
          .where('tenant_id', '=', tenantId)
          .where('deleted_at', 'is', null)
          .executeTakeFirst();
  if (!found)
    errors.push({ path: `/target/${wanted}`, message: `is not ${wanted === 'audienceId' ? 'an audience' : 'a page'} of this tenant` });
  return found?.page_id;
}

/** A path a live link of the domain has, in any case, is 409 at `/path`. */
export async function createPageLink(trx: Transaction<Database>, tenantId: string, input: PageLinkCreate): Promise<PageLink> {
  const errors: FieldError[] = [];
  const domain =
    input.tenantDomainId === undefined ? await findFallbackDomain(trx, tenantId) : await findDomain(trx, tenantId, input.tenantDomainId);
  if (!domain) errors.push({ path: '/tenantDomainId', message: 'is not a domain of this tenant' });
  const pageId = await resolveTarget(trx, tenantId, input.target, errors);
  if (!domain || pageId === undefined || errors.length > 0) throw invalid(errors);
  const at = now();
  const row: PageLinksTable = {
    id: newId('pagelink'),
    tenant_id: tenantId,
    tenant_domain_id: domain.id,
    path: input.path,
    path_lc: input.path.toLowerCase(),
    target_type: input.target.targetType,
    target_audience_id: input.target.audienceId ?? null,
    target_page_id: input.target.targetType === 'audience' ? null : pageId,
    page_id: pageId,
    created_at: at,
    updated_at: at,
    deleted_at: null,
  };
  await conflictIfTaken(trx.insertInto('page_links').values(row).execute(), pathTaken(input.path));
  const link = toPageLink(row);
  await emit(trx, tenantId, 'page_link.created', link);
  return link;
}

function invalid(errors: FieldError[]): AppError {
  return new AppError('validation_failed', `Invalid body: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`, errors);
}

const pathTaken = (path: string) => ({
  path: '/path',
  message: 'is already used on this domain',
  detail: `A live link with path ${path} already exists on this domain`,
});

/** Path and target under the rules of creation; a deleted link is 409. Undefined when there is no such link. */
export async function updatePageLink(
  trx: Transaction<Database>,
  tenantId: string,
  linkId: string,
  body: PageLinkUpdate,
): Promise<PageLink | undefined> {
  const current = await trx
    .selectFrom('page_links')
    .selectAll()
    .where('id', '=', linkId)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  if (!current) return undefined;
  if (current.deleted_at !== null) throw conflict('The page link is deleted; create a new one instead');
  const shown = toPageLink(current);
  const patch = settle(PageLinkUpdate, body, shown);
  const changes: Partial<PageLinksTable> = {};
  if (patch.target !== undefined) {
    const errors: FieldError[] = [];
    const pageId = await resolveTarget(trx, tenantId, patch.target, errors);
    if (pageId === undefined || errors.length > 0) throw invalid(errors);
    changes.target_type = patch.target.targetType;
    changes.target_audience_id = patch.target.audienceId ?? null;
    changes.target_page_id = patch.target.targetType === 'audience' ? null : pageId;
    changes.page_id = pageId;
  }
  if (patch.path !== undefined) {
    changes.path = patch.path;
    changes.path_lc = patch.path.toLowerCase();
  }
  if (Object.keys(changes).length === 0) return shown;
  changes.updated_at = after(current.updated_at);
  const row = await conflictIfTaken(
    trx.updateTable('page_links').set(changes).where('id', '=', linkId).returningAll().executeTakeFirstOrThrow(),
    pathTaken(patch.path ?? current.path),
  );
  const link = toPageLink(row);
  await emit(trx, tenantId, 'page_link.updated', link);
  return link;
}

/**
 * For a domain that goes: its live links are deleted, each with its `page_link.deleted` event, and
 * then every link row of the domain is removed (they name a domain that no longer exists).
 */
export async function deleteDomainLinks(trx: Transaction<Database>, tenantId: string, domainId: string): Promise<void> {
  await deleteLiveLinks(trx, tenantId, now(), (q) => q.where('tenant_id', '=', tenantId).where('tenant_domain_id', '=', domainId));
  await trx.deleteFrom('page_links').where('tenant_id', '=', tenantId).where('tenant_domain_id', '=', domainId).execute();
}

/** For a page that is deleted (pages/repository.ts): its live links are deleted, which frees their paths. */
export async function deletePageLinksOf(trx: Transaction<Database>, tenantId: string, pageId: string, at: string): Promise<void> {
  await deleteLiveLinks(trx, tenantId, at, (q) => q.where('page_id', '=', pageId));
}

type LinksUpdate = UpdateQueryBuilder<Database, 'page_links', 'page_links', UpdateResult>;

/** The live links `which` picks are deleted at `at`, each with its `page_link.deleted` event. */
async function deleteLiveLinks(
  trx: Transaction<Database>,
  tenantId: string,
  at: string,
  which: (q: LinksUpdate) => LinksUpdate,
): Promise<void> {
  const deleted = await which(trx.updateTable('page_links').set({ deleted_at: at, updated_at: at }))
    .where('deleted_at', 'is', null)
    .returningAll()
    .execute();
  for (const row of deleted) await emit(trx, tenantId, 'page_link.deleted', toPageLink(row));
}

/** A link of the tenant as stored, deleted or not (a visit names the link it came through). */
export function findPageLink(db: Kysely<Database>, tenantId: string, linkId: string) {
  return db.selectFrom('page_links').selectAll().where('id', '=', linkId).where('tenant_id', '=', tenantId).executeTakeFirst();
}

/** False when there is no such link; deleting a deleted link changes nothing. */
export async function deletePageLink(trx: Transaction<Database>, tenantId: string, linkId: string): Promise<boolean> {
  const row = await trx
    .selectFrom('page_links')
    .select(['id', 'deleted_at'])
    .where('id', '=', linkId)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  if (!row) return false;
  if (row.deleted_at === null) {
    const at = now();
    const deleted = await trx
      .updateTable('page_links')
      .set({ deleted_at: at, updated_at: at })
      .where('id', '=', linkId)
      .where('deleted_at', 'is', null)
      .returningAll()
      .executeTakeFirst();
    if (deleted) await emit(trx, tenantId, 'page_link.deleted', toPageLink(deleted));
  }
  return true;
}

const pageLinksList = keysetList({ name: 'page_links', table: 'page_links', ...NEWEST_FIRST });

/** Live links of one domain (the fallback one unless named) whose path contains the text, newest first. */
export async function searchPageLinks(db: Kysely<Database>, tenantId: string, query: PageLinkSearchQuery) {
  const domainId =
    query.tenantDomainId === undefined ? await fallbackDomainId(db, tenantId) : (await findDomain(db, tenantId, query.tenantDomainId))?.id;
  if (!domainId) throw notFound('Tenant domain');
  const { pageId, targetType } = query;
  const text = (query.query ?? '').toLowerCase();
  const request = pageLinksList.request(query, { filters: { domain: domainId, text, pageId, targetType } });
  const { rows, totalCount } = await textSearch(db, {
    table: 'page_links',
    scope: { column: 'tenant_domain_id', id: domainId },
    columns: ['path_lc'],
    text,
    order: { newestFirst: (sameOrder) => pageLinksList.apply(request, sameOrder) },
    page: request,
    where: (q) => q.where('page_links.tenant_id', '=', tenantId).where('page_links.deleted_at', 'is', null),
    filter: (q) => {
      const ofPage = pageId === undefined ? q : q.where('page_links.page_id', '=', pageId);
      return targetType === undefined ? ofPage : ofPage.where('page_links.target_type', '=', targetType);
    },
    // A page's links are few: counted by visiting them. The counts keep each target type apart.
    counted: pageId === undefined ? { asked: targetType ? [targetType] : [...TARGET_TYPES], all: [...TARGET_TYPES] } : undefined,
    select: (q) => q.selectAll('page_links'),
  });
  return pageLinksList.toListPage({ request, rows, totalCount, map: toPageLink });
}

/** The path of the tenant's link, a deleted link's too (a visit keeps the link it came through). */
export async function linkPathOf(db: Kysely<Database>, tenantId: string, linkId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('page_links')
    .select('path')
    .where('id', '=', linkId)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  return row?.path;
}

/** What a served path needs of its link. */
export type Link = Pick<PageLinksTable, 'id' | 'path' | 'target_type' | 'target_audience_id' | 'page_id' | 'updated_at'>;

const LINK_COLUMNS = ['id', 'path', 'target_type', 'target_audience_id', 'page_id', 'updated_at'] as const;

/** The live link of a path on a domain; compiled once, since it runs on every visitor request. */
export const liveLinkAt = prepared((db, p: { domainId: string; path: string }) =>
  db
    .selectFrom('page_links')
    .select(LINK_COLUMNS)
    .where('tenant_domain_id', '=', p.domainId)
    .where('path', '=', p.path)
    .where('deleted_at', 'is', null),
);
