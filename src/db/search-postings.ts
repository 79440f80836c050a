import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import { COUNTED_SEARCHES, type CountedSearch } from './search-counts.js';
import type { SearchedTable } from './search.js';
import type { Database } from './types.js';

/**
 * PostgreSQL's substring searches, read newest first (migration 0015). Its trigram GIN index
 * finds matches but not in time order, so a page was either a walk of the list index testing every
 * row (slow when the matches sit in old rows) or every match read and sorted (slow when they are
 * many). `search_postings` holds, per scope and trigram, the live rows that contain it, keyed by
 * the list's order (created_at, id): a page walks one trigram's postings newest first, tests each
 * row with LIKE and stops at the limit. For a text of three characters every posting is a match;
 * a longer one walks its rarest trigram. SQLite reads its FTS5 index in row order instead (search.ts).
 */
export type PostedSearch = Pick<CountedSearch, 'scope' | 'columns' | 'liveColumns' | 'live'> & { table: SearchedTable };

const counted = (table: CountedSearch['table']): PostedSearch => {
  const search = COUNTED_SEARCHES.find((s) => s.table === table);
  if (!search) throw new Error(`No counted search of ${table}`);
  return search;
};

export const POSTED_SEARCHES: PostedSearch[] = [
  counted('accounts'),
  counted('page_links'),
  {
    table: 'audiences',
    scope: 'tenant_id',
    columns: ['effective_name_lc', 'page_name_lc'],
    liveColumns: ['archived_at', 'page_deleted'],
    live: (row) => `${row}.archived_at is null and ${row}.page_deleted = 0`,
  },
];

/** The distinct trigrams of a text, in code points, as the database's `search_trigrams` makes them. */
export function trigramsOf(text: string): string[] {
  const chars = Array.from(text);
  const grams = new Set<string>();
  for (let i = 0; i + 3 <= chars.length; i++) grams.add(chars.slice(i, i + 3).join(''));
  return [...grams];
}

/** Postings counted per trigram to pick the rarest; beyond this many, a trigram is "common". */
const PROBE = 500;
/** Trigrams probed at most, spread over a long text (a 2,048-character path has 2,046). */
const PROBED_GRAMS = 12;

/**
 * The trigram of `text` (three characters or more) with the fewest postings in the scope, each
 * counted up to PROBE: the shortest walk to a page. One statement, a few hundred index entries.
 */
export async function rarestTrigram(db: Kysely<Database>, table: SearchedTable, scopeId: string, text: string): Promise<string> {
  const all = trigramsOf(text);
  if (all.length <= 1) return all[0] ?? text;
  // Any trigram of the text finds every match; the rarest of a few is short enough a walk.
  const grams =
    all.length <= PROBED_GRAMS
      ? all
      : Array.from({ length: PROBED_GRAMS }, (_, i) => all[Math.floor((i * all.length) / PROBED_GRAMS)] ?? '');
  const { rows } = await sql<{ gram: string }>`select g.gram from unnest(${grams}::text[]) as g(gram)
    order by (select count(*) from (select 1 from search_postings p
      where p.source = ${table} and p.scope_id = ${scopeId} and p.gram = g.gram limit ${PROBE}) as found), g.gram
    limit 1`.execute(db);
  return rows[0]?.gram ?? grams[0] ?? text;
}

/** Where a walk of postings is: the trigram, how many postings it reads, and the list's cursor. */
export interface PostingsWalk {
  gram: string;
  chunk: number;
  /** The sort key (created_at, id) of the last row of the page before, if any. */
  after: readonly (string | number)[] | null;
}

/** The next `chunk` postings of the walk, newest first (every list searched this way is newest first). */
const postings = (table: SearchedTable, scopeId: string, walk: PostingsWalk) =>
  sql`select row_id, created_at from search_postings
    where source = ${table} and scope_id = ${scopeId} and gram = ${walk.gram}
    ${walk.after ? sql`and (created_at, row_id) < (${walk.after[0]}, ${walk.after[1]})` : sql``}
    order by created_at desc, row_id desc`;

/**
 * For `$call`: `table`'s rows in `scopeId` among the walk's next postings, joined as `p`, whose
 * (created_at, row_id) copy the list's key (`POSTING_KEY`). The postings are read first, at most
 * `chunk` of them, and only then joined: left to itself, the planner would rather hash every
 * posting of a common trigram than stop after a page. The caller still tests the whole text.
 */
export function joinPostings(table: SearchedTable, scopeId: string, walk: PostingsWalk) {
  return <DB, TB extends keyof DB, O>(qb: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O> =>
    // The join adds the `p` alias only; every column the caller reads stays its own table's.
    qb.innerJoin(sql<{ row_id: string }>`(${postings(table, scopeId, walk)} limit ${walk.chunk})`.as('p'), (join) =>
      join.on(sql<boolean>`p.row_id = ${sql.ref(`${table}.id`)}`),
    ) as unknown as SelectQueryBuilder<DB, TB, O>;
}

/** The list key's copy in the postings: a page is ordered, and its cursor compared, by these. */
export const POSTING_KEY = [sql.ref('p.created_at'), sql.ref('p.row_id')] as const;

/**
 * Reads `want` rows through postings: `read` reads among the next `chunk` postings; while it finds
 * fewer than `want` and more postings follow, the chunk grows fourfold (and is read again from its
 * start). For a text of three characters every posting matches (unless a filter the postings do not
 * keep, a link's target type, leaves some out), so the first chunk (`want`) is the page; a longer
 * text's rarest trigram mostly matches too. All chunks together read at most 4/3 of the last one,
 * which is at most four times the postings the page needed.
 */
export async function walkPostings<R>(
  db: Kysely<Database>,
  table: SearchedTable,
  scopeId: string,
  walk: Omit<PostingsWalk, 'chunk'>,
  want: number,
  read: (walk: PostingsWalk) => Promise<R[]>,
): Promise<R[]> {
  for (let chunk = Math.max(want, 1); ; chunk *= 4) {
    const rows = await read({ ...walk, chunk });
    if (rows.length >= want) return rows;
    const { rows: beyond } = await sql`${postings(table, scopeId, { ...walk, chunk })} offset ${chunk} limit 1`.execute(db);
    if (beyond.length === 0) return rows;
  }
}
