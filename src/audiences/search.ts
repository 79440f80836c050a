import { sql, type Kysely } from 'kysely';
import { textSearch } from '../db/search/index.js';
import type { Database } from '../db/types.js';
import type { AudienceSearchQuery } from './schemas.js';

/** Audience search counts its matches up to this many; beyond, `totalCount` is null (docs/decisions.md#search). */
export const AUDIENCE_COUNT_UP_TO = 100;

/**
 * Substring search over the audiences' effective names and their pages' names: prefix matches
 * first, then newest. Archived audiences and audiences of deleted pages never match (the live
 * audiences' partial indexes say it with these literals, so SQLite can use them).
 */
export async function searchAudiences(db: Kysely<Database>, tenantId: string, query: AudienceSearchQuery) {
  const limit = query.limit ?? 20;
  const { rows, totalCount } = await textSearch(db, {
    table: 'audiences',
    scope: { column: 'tenant_id', id: tenantId },
    columns: ['effective_name_lc', 'page_name_lc'],
    text: (query.query ?? '').toLowerCase(),
    order: { prefixFirst: { countUpTo: AUDIENCE_COUNT_UP_TO } },
    page: { limit },
    where: (q) => q.where(sql<boolean>`audiences.archived_at is null and audiences.page_deleted = 0`),
    select: (q) => q.select(['audiences.id', 'audiences.effective_name', 'audiences.page_id', 'audiences.page_name']),
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
