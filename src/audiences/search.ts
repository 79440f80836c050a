import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import {
  indexable,
  isPostgres,
  matchingText,
  orderedBy,
  plannedOnce,
  postedGram,
  scopeEquals,
  searchesInOrder,
  startsWith,
} from '../db/search.js';
import { POSTING_KEY, walkPostings, type PostingsWalk } from '../db/search-postings.js';
import type { Database } from '../db/types.js';
import type { AudienceSearchQuery } from './schemas.js';

/** Audience search counts its matches up to this many; beyond, `totalCount` is null (docs/decisions.md). */
export const AUDIENCE_COUNT_UP_TO = 100;
/** Up to this many prefix matches, they are read by name (the live audiences' name indexes) and sorted. */
const FEW_PREFIX_MATCHES = 500;

/**
 * The conditions "starts with `text`" as ranges of the live audiences' name indexes, one per name,
 * in code-point order (SQLite: migration 0014; PostgreSQL: 0015, in the "C" collation); undefined
 * for an empty text.
 */
function prefixRanges(db: Kysely<Database>, text: string): RawBuilder<boolean>[] | undefined {
  if (text === '') return undefined;
  const chars = Array.from(text);
  const last = chars.pop()?.codePointAt(0) ?? 0;
  if (last >= 0x10ffff) return undefined;
  const above = chars.join('') + String.fromCodePoint(last + 1 === 0xd800 ? 0xe000 : last + 1);
  const collate = isPostgres(db) ? sql` collate "C"` : sql``;
  return ['audiences.effective_name_lc', 'audiences.page_name_lc'].map(
    (column) =>
      sql<boolean>`(${sql.ref(column)}${collate} >= ${plannedOnce(db, text)} and ${sql.ref(column)}${collate} < ${plannedOnce(db, above)})`,
  );
}

/** How many rows `matches` selects, reading at most `max + 1` of them. */
async function countAtMost(db: Kysely<Database>, matches: SelectQueryBuilder<Database, 'audiences', object>, max: number): Promise<number> {
  const row = await db
    .selectFrom(
      matches
        .select(sql<number>`1`.as('one'))
        .limit(max + 1)
        .as('matches'),
    )
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The tenant's live audiences, as the partial indexes of live audiences say it (literals, so SQLite can use them). */
const live = sql<boolean>`audiences.archived_at is null and audiences.page_deleted = 0`;

/**
 * Substring search over the audiences' effective names and their pages' names: prefix matches
 * first, then newest. Archived audiences and audiences of deleted pages never match.
 *
 * Read as two pages, each newest first and stopping at the limit: the prefix matches, then (when
 * they do not fill it) the other matches, so no match beyond the page is read. On SQLite, when the
 * tenant's audiences are in key order, both come from the FTS index in its row order (the prefix
 * ones through an initial-phrase query); on PostgreSQL, from the postings of the text's rarest
 * trigram. The count stops at AUDIENCE_COUNT_UP_TO.
 */
export async function searchAudiences(db: Kysely<Database>, tenantId: string, query: AudienceSearchQuery) {
  const text = (query.query ?? '').toLowerCase();
  const limit = query.limit ?? 20;
  const [ordered, gram] = await Promise.all([
    searchesInOrder(db, 'audiences', tenantId, text),
    postedGram(db, 'audiences', tenantId, text),
  ]);
  const searched = { table: 'audiences', scopeId: tenantId, columns: ['effective_name_lc', 'page_name_lc'] } as const;
  const matching = (atStart: boolean, walk?: PostingsWalk) =>
    db
      .selectFrom('audiences')
      .where(scopeEquals(db, 'audiences.tenant_id', tenantId, ordered || indexable(text)))
      .where(live)
      .$call(matchingText(db, searched, text, { ordered, driven: false, substringIndex: true, ...(walk ? { walk } : {}) }, atStart));
  const prefix = sql<boolean>`(${startsWith(db, 'audiences.effective_name_lc', text)} or ${startsWith(db, 'audiences.page_name_lc', text)})`;
  const columns = ['audiences.id', 'audiences.effective_name', 'audiences.page_id', 'audiences.page_name'] as const;
  // PostgreSQL walks the postings of the text's rarest trigram, as many as it takes (search-postings.ts).
  const walked = <R>(take: number, read: (walk?: PostingsWalk) => Promise<R[]>) =>
    gram === undefined ? read() : walkPostings(db, 'audiences', tenantId, { gram, after: null }, take, read);
  const page = (atStart: boolean, take: number) =>
    walked(take, (walk) =>
      matching(atStart, walk)
        .select(columns)
        .where(atStart ? prefix : sql<boolean>`not ${prefix}`)
        .$if(ordered, (q) => q.orderBy(orderedBy, 'desc'))
        .$if(walk !== undefined, (q) => q.orderBy(POSTING_KEY[0], 'desc').orderBy(POSTING_KEY[1], 'desc'))
        .$if(!ordered && walk === undefined, (q) => q.orderBy('audiences.created_at', 'desc').orderBy('audiences.id', 'desc'))
        .limit(take)
        .execute(),
    );
  const countMatches = async () =>
    (
      await walked(AUDIENCE_COUNT_UP_TO + 1, (walk) =>
        matching(false, walk)
          .select('audiences.id')
          .limit(AUDIENCE_COUNT_UP_TO + 1)
          .execute(),
      )
    ).length;
  // Few prefix matches are found faster by name than by walking the matches newest first: each
  // name's range (SQLite: ordered by `+created_at`, so that it keeps to the name index; PostgreSQL:
  // all of them, at most FEW_PREFIX_MATCHES, as a sort could tempt its planner to the time index),
  // then merged and sorted here.
  const fewPrefixMatches = async (take: number) => {
    const ranges = prefixRanges(db, text);
    if (!ranges) return undefined;
    const inRange = (range: RawBuilder<boolean>) =>
      db
        .selectFrom('audiences')
        .where(sql<boolean>`audiences.tenant_id = ${plannedOnce(db, tenantId)}`)
        .where(live)
        .where(range);
    let many = 0;
    const nonEmpty: RawBuilder<boolean>[] = [];
    for (const range of ranges) {
      const n = await countAtMost(db, inRange(range), FEW_PREFIX_MATCHES);
      many += n;
      if (n > 0) nonEmpty.push(range);
    }
    if (many > FEW_PREFIX_MATCHES) return undefined;
    const found = new Map<string, Awaited<ReturnType<typeof page>>[number] & { created_at: string }>();
    // A row in a name's range starts with the text (code-point order): it is a prefix match.
    for (const range of nonEmpty) {
      const rows = await inRange(range)
        .select([...columns, 'audiences.created_at'])
        .$if(!isPostgres(db), (q) => q.orderBy(sql`+audiences.created_at`, 'desc').orderBy('audiences.id', 'desc').limit(take))
        .execute();
      for (const row of rows) found.set(row.id, row);
    }
    return [...found.values()]
      .sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1))
      .slice(0, take);
  };
  const readPage = async () => {
    const first = (await fewPrefixMatches(limit + 1)) ?? (await page(true, limit + 1));
    return first.length > limit || text === '' ? first : [...first, ...(await page(false, limit + 1 - first.length))];
  };
  const [rows, counted] = await Promise.all([readPage(), countMatches()]);
  return {
    items: rows
      .slice(0, limit)
      .map((r) => ({ audienceId: r.id, effectiveName: r.effective_name, pageId: r.page_id, pageName: r.page_name })),
    hasMore: rows.length > limit,
    nextCursor: null,
    totalCount: counted > AUDIENCE_COUNT_UP_TO ? null : counted,
  };
}
