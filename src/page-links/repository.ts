import type { Kysely, Transaction } from 'kysely';
import { substringMatch } from '../db/search.js';
import type { Database, PageLinksTable } from '../db/types.js';
import { findDomain, findFallbackDomain } from '../domains/repository.js';
import { invalidField, notFound } from '../http/errors.js';
import { olderThan, pageRequest, toPage } from '../http/pagination.js';
import { newId } from '../ids.js';
import { now } from '../time.js';
import type { PageLink, PageLinkCreate, PageLinkSearchQuery } from './schemas.js';

export const toPageLink = (row: PageLinksTable): PageLink => ({
  pageLinkId: row.id,
  tenantDomainId: row.tenant_domain_id,
  path: row.path,
  target: {
    targetType: row.target_type as PageLink['target']['targetType'],
    ...(row.target_audience_id !== null ? { audienceId: row.target_audience_id } : {}),
    ...(row.target_page_id !== null ? { pageId: row.target_page_id } : {}),
  },
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  deletedAt: row.deleted_at,
});

/** The page a target leads to: an audience target needs an audience, the others a page, of this tenant. */
async function resolveTarget(db: Kysely<Database>, tenantId: string, target: PageLinkCreate['target']): Promise<string> {
  if (target.targetType === 'audience') {
    if (target.pageId !== undefined) throw invalidField('/target/pageId', 'is not allowed for an audience target');
    if (target.audienceId === undefined) throw invalidField('/target/audienceId', 'is required for an audience target');
    const audience = await db
      .selectFrom('audiences')
      .select('page_id')
      .where('id', '=', target.audienceId)
      .where('tenant_id', '=', tenantId)
      .where('page_deleted', '=', 0)
      .executeTakeFirst();
    if (!audience) throw invalidField('/target/audienceId', 'is not an audience of this tenant');
    return audience.page_id;
  }
  if (target.audienceId !== undefined) throw invalidField('/target/audienceId', `is not allowed for a ${target.targetType} target`);
  if (target.pageId === undefined) throw invalidField('/target/pageId', `is required for a ${target.targetType} target`);
  const page = await db.selectFrom('pages').select('id').where('id', '=', target.pageId).where('tenant_id', '=', tenantId).where('deleted_at', 'is', null).executeTakeFirst();
  if (!page) throw invalidField('/target/pageId', 'is not a page of this tenant');
  return page.id;
}

/** The caller turns a unique violation (the path is taken on that domain) into a 409. */
export async function createPageLink(trx: Transaction<Database>, tenantId: string, input: PageLinkCreate): Promise<PageLink> {
  const domain = input.tenantDomainId === undefined ? await findFallbackDomain(trx, tenantId) : await findDomain(trx, tenantId, input.tenantDomainId);
  if (!domain) throw invalidField('/tenantDomainId', 'is not a domain of this tenant');
  const pageId = await resolveTarget(trx, tenantId, input.target);
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
    page_deleted: 0,
    created_at: at,
    updated_at: at,
    deleted_at: null,
  };
  await trx.insertInto('page_links').values(row).execute();
  return toPageLink(row);
}

/** False when there is no such link; deleting a deleted link changes nothing. */
export async function deletePageLink(trx: Transaction<Database>, tenantId: string, linkId: string): Promise<boolean> {
  const row = await trx.selectFrom('page_links').select(['id', 'deleted_at']).where('id', '=', linkId).where('tenant_id', '=', tenantId).executeTakeFirst();
  if (!row) return false;
  if (row.deleted_at === null) {
    const at = now();
    await trx.updateTable('page_links').set({ deleted_at: at, updated_at: at }).where('id', '=', linkId).where('deleted_at', 'is', null).execute();
  }
  return true;
}

/** Live links of one domain (the fallback one unless named), newest first. */
export async function searchPageLinks(db: Kysely<Database>, tenantId: string, query: PageLinkSearchQuery) {
  const domain = query.tenantDomainId === undefined ? await findFallbackDomain(db, tenantId) : await findDomain(db, tenantId, query.tenantDomainId);
  if (!domain) throw notFound('Tenant domain');
  const text = (query.query ?? '').toLowerCase();
  const filters = { domain: domain.id, text, pageId: query.pageId, targetType: query.targetType };
  const page = pageRequest('page_links', filters, query);
  const matching = db
    .selectFrom('page_links')
    .where('page_links.tenant_domain_id', '=', domain.id)
    .where('page_links.tenant_id', '=', tenantId)
    .where('page_links.deleted_at', 'is', null)
    .where('page_links.page_deleted', '=', 0)
    .$if(text !== '', (q) => q.where(substringMatch(db, 'page_links', ['path_lc'], text)))
    .$if(query.pageId !== undefined, (q) => q.where('page_links.page_id', '=', query.pageId!))
    .$if(query.targetType !== undefined, (q) => q.where('page_links.target_type', '=', query.targetType!));
  const [rows, count] = await Promise.all([
    matching
      .selectAll()
      .$if(page.after !== null, (q) => q.where(olderThan('page_links', page.after!)))
      .orderBy('page_links.created_at', 'desc')
      .orderBy('page_links.id', 'desc')
      .limit(page.limit + 1)
      .execute(),
    matching.select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow(),
  ]);
  return toPage('page_links', filters, page, rows, Number(count.n), (r) => [r.created_at, r.id], toPageLink);
}
