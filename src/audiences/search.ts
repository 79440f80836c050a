import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import { containsIndexed, type Rows, startsWith, textSearch } from '../db/search/index.js';
import { planOnce } from '../db/plan-once.js';
import type { Database } from '../db/types.js';
import type { AudienceSearchQuery } from './schemas.js';

/** Audience search counts its matches up to this many; beyond, `totalCount` is null (docs/decisions.md#search). */
export const AUDIENCE_COUNT_UP_TO = 100;

/** The audience's page's name (lowercased, for matching), read from the page's own row. */
const pageNameLc = sql.raw('(select p.name_lc from pages p where p.id = audiences.page_id)');

/**
 * Substring search over the audiences' effective names and their pages' names: prefix matches
 * first, then newest. Archived audiences and audiences of deleted pages never match (the live
 * audiences' partial indexes say it with these literals, so SQLite can use them). A page's name is
 * kept in the page's row only, with its own substring index: the audiences of the tenant's live
 * pages whose name matches are merged in (issue 50: a rename writes one row).
 */
export async function searchAudiences(db: Kysely<Database>, tenantId: string, query: AudienceSearchQuery) {
  const limit = query.limit ?? 20;
  const text = (query.query ?? '').toLowerCase();
  const live = sql<boolean>`audiences.archived_at is null and audiences.page_deleted = 0`;
  const pages = db
    .selectFrom('pages')
    .where('pages.tenant_id', '=', tenantId)
    .where('pages.deleted_at', 'is', null)
    .where(containsIndexed(db, 'pages', 'name_lc', text));
  const named = text === '' ? 'none' : await pageNames(db, pages, text);
  // The live audiences of `matched` pages. `walk`: the tenant's live audiences newest first, each
  // tested against the pages (when many match, a page of them fills soon). Else read from the
  // pages: a cross join, as SQLite then keeps the tables in their written order (with an order by,
  // it would rather walk the audiences).
  const ofPages = (matched: typeof pages, walk: boolean) =>
    walk
      ? db
          .selectFrom('audiences')
          .where('audiences.tenant_id', '=', tenantId)
          .where(live)
          .where(sql<boolean>`${planOnce(db, sql.ref('audiences.page_id'))} in (${matched.select('pages.id')})`)
      : (matched
          .crossJoin('audiences')
          .whereRef('audiences.page_id', '=', 'pages.id')
          .where('audiences.tenant_id', '=', tenantId)
          .where(live) as unknown as Rows<'audiences'>);
  const { rows, totalCount } = await textSearch(db, {
    table: 'audiences',
    scope: { column: 'tenant_id', id: tenantId },
    columns: ['effective_name_lc'],
    text,
    order: { prefixFirst: { countUpTo: AUDIENCE_COUNT_UP_TO } },
    page: { limit },
    where: (q) => q.where(live),
    through:
      named === 'none'
        ? undefined
        : {
            rows: (walk) => ofPages(pages, walk),
            starting:
              named === 'start'
                ? {
                    condition: startsWith(db, pageNameLc, text),
                    rows: (walk) => ofPages(pages.where(startsWith(db, 'pages.name_lc', text)), walk),
                  }
                : undefined,
          },
    select: (q) =>
      q.select([
        'audiences.id',
        'audiences.effective_name',
        'audiences.page_id',
        sql<string>`(select p.name from pages p where p.id = audiences.page_id)`.as('page_name'),
      ]),
  });
  return {
    items: rows
      .slice(0, limit)
      .map((r) => ({ audienceId: r.id, effectiveName: r.effective_name, pageId: r.page_id, pageName: r.page_name })),
    hasMore: rows.length > limit,
    nextCursor: null,
    totalCount,
  };
}

/**
 * Whether a live page's name contains the text (`pages` is those of the tenant whose name does),
 * and whether one starts with it. Most searches match no page's name, and then read no audience
 * through a page: asking the pages first costs one statement where four would find nothing.
 */
async function pageNames(db: Kysely<Database>, pages: SelectQueryBuilder<Database, 'pages', object>, text: string) {
  const row = await pages
    .select(sql<number | null>`max(case when ${startsWith(db, 'pages.name_lc', text)} then 1 else 0 end)`.as('starts'))
    .executeTakeFirst();
  const starts = row?.starts ?? null;
  return starts === null ? 'none' : Number(starts) === 1 ? 'start' : 'contain';
}
