import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { isPostgres } from './adapter.js';
import { countable, countByGram, countWithoutVisiting, ftsPhrase, gramCount, type CountedSearch } from './search-counts.js';
import { joinPostings, POSTING_KEY, rarestTrigram, walkPostings, type PostingsWalk } from './search-postings.js';
import type { Database } from './types.js';

export { isPostgres };

/** `text` for LIKE, its own `%`, `_` and `\` taken literally (with `escape '\'`). */
const likeLiteral = (text: string): string => text.replace(/[\\%_]/g, '\\$&');

/**
 * `column LIKE '%text%'`, with the text's own `%`, `_` and `\` taken literally on both dialects.
 * Searches use it on lowercased copies with lowercased text; erasure, on stored text as stored.
 */
export function contains(column: string, text: string): RawBuilder<boolean> {
  return sql<boolean>`${sql.ref(column)} like ${`%${likeLiteral(text)}%`} escape '\\'`;
}

/**
 * `lower(column) LIKE '%text%'` with `text` lowercased, its wildcards taken literally. Both
 * databases fold A-Z alike here; beyond ASCII they differ (SQLite folds nothing), so callers that
 * need more pass ASCII text and check the rows they get in code (erasure's matcher).
 */
export function containsAsciiFolded(column: string, text: string): RawBuilder<boolean> {
  return sql<boolean>`lower(${sql.ref(column)}) like ${`%${likeLiteral(text.toLowerCase())}%`} escape '\\'`;
}

/**
 * Rows of `table` where any of `columns` contains `text`, through the substring index that
 * `createSubstringIndex` made. PostgreSQL's trigram indexes serve plain LIKE; SQLite's FTS5
 * trigram table is asked for the text as one phrase (a substring match). Texts shorter than a
 * trigram cannot use either index and fall back to LIKE over the caller's other filters.
 */
export function substringMatch(
  db: Kysely<Database>,
  table: string,
  columns: readonly string[],
  text: string,
  useIndex = true,
): RawBuilder<boolean> {
  const like = sql<boolean>`(${sql.join(
    columns.map((c) => contains(`${table}.${c}`, text)),
    sql` or `,
  )})`;
  if (isPostgres(db) || !indexable(text) || !useIndex) return like;
  const fts = sql.table(`${table}_fts`);
  return sql<boolean>`${sql.ref(`${table}.rowid`)} in (select rowid from ${fts} where ${fts} match ${ftsPhrase(text)})`;
}

/** `column LIKE 'text%'` with the text taken literally: what ranks prefix matches first. */
export function startsWith(db: Kysely<Database>, column: string, text: string): RawBuilder<boolean> {
  return sql<boolean>`${sql.ref(column)} like ${plannedOnce(db, `${likeLiteral(text)}%`)} escape '\\'`;
}

/**
 * A value bound as `+?` on SQLite (as is on PostgreSQL, where `+` on text is an error): planned
 * once, where a bare `?` compared with an indexed column or on the right of LIKE makes SQLite plan
 * the statement again on every run, for the value bound (db/prepared.ts). For conditions whose
 * plan does not depend on the value.
 */
export function plannedOnce(db: Kysely<Database>, value: string): RawBuilder<string> {
  return isPostgres(db) ? sql<string>`${value}` : sql<string>`+${value}`;
}

/** A text of fewer than three characters has no trigram: no substring index can serve it. */
export const indexable = (text: string): boolean => [...text].length >= 3;

/**
 * How SQLite reads a page of matches, by how many there are: up to 300, by looking each match up;
 * beyond, by walking the list index in order, testing rows against the substring index's matches
 * (which must all be read first); and from 3,000 on, by testing each row with LIKE instead, since
 * a page fills after a few rows when matches are that common, while reading every match from the
 * substring index costs as much as counting them again.
 */
const DRIVE_UP_TO = 300;
const LIKE_FROM = 3000;

/**
 * How a search reads its page. `ordered` (SQLite): the substring index's matches, joined as `fts`,
 * come newest first in its own row order (see `inOrder`), so a page is its first rows: no match
 * beyond the page is read. Otherwise `driven`: the substring index's matches drive the query;
 * `substringIndex`: matches come from it at all (else `LIKE` tests the rows of the list index).
 */
export interface SearchPlan {
  ordered: boolean;
  driven: boolean;
  substringIndex: boolean;
  /** PostgreSQL: the postings the page is read from (search-postings.ts, `joinPostings`). */
  walk?: PostingsWalk;
  /** PostgreSQL: the search's count, for the page's statement to select as `search_total`. */
  total?: RawBuilder<number | string | bigint | null>;
}
const DRIVEN: SearchPlan = { ordered: false, driven: true, substringIndex: true };
const ORDERED: SearchPlan = { ordered: true, driven: false, substringIndex: true };
const UNDRIVEN: SearchPlan = { ordered: false, driven: false, substringIndex: true };

/**
 * `column = value` for the column that scopes a substring search (the tenant, the domain). With
 * `driven`, SQLite is told not to use that column's index (`+column`, a no-op otherwise), so the
 * FTS matches become the driving set: with few matches, walking a whole tenant's index to test
 * each row against them costs a hundred times more. PostgreSQL's planner weighs both on its own.
 */
export function scopeEquals(db: Kysely<Database>, column: string, value: string, driven: boolean): RawBuilder<boolean> {
  return driven && !isPostgres(db) ? sql<boolean>`+${sql.ref(column)} = ${value}` : sql<boolean>`${sql.ref(column)} = ${value}`;
}

/**
 * A search's page and its total. `counts`, when the search has them, count without visiting the
 * matches where they can (src/db/search-counts.ts); a search that has none carries a filter the
 * counts do not keep (few of the matches pass it) and is read by its count.
 * `scope` names the table and the tenant (a domain, for links): on SQLite, when its rows are in
 * order, a text the substring index serves is read in the index's order (ORDERED), whatever its
 * number of matches; on PostgreSQL, through the postings of its rarest trigram. Otherwise
 * the count comes first and its size decides how the page is read.
 */
export async function searchWithTotal<R extends object>(
  db: Kysely<Database>,
  scope: { table: SearchedTable; scopeId: string; request: { limit: number; after: readonly (string | number)[] | null } },
  text: string,
  items: (plan: SearchPlan) => Promise<R[]>,
  count: (plan: SearchPlan) => Promise<number>,
  counts?: SearchCounts,
): Promise<[R[], number]> {
  const indexed = counts !== undefined && indexable(text);
  const postgres = isPostgres(db);
  // PostgreSQL, a text of three characters: its count rides in the page's statement, one round
  // trip instead of two.
  const carried =
    postgres && indexed && countable(text) && counts ? gramCount(counts.source, counts.scopeId, counts.facets.asked, text) : undefined;
  const [ordered, counted, gram] = await Promise.all([
    counts !== undefined && searchesInOrder(db, scope.table, scope.scopeId, text),
    counts && !carried ? countWithoutVisiting(db, counts.source, counts.scopeId, counts.facets, text) : undefined,
    counts && postedGram(db, scope.table, scope.scopeId, text),
  ]);
  const first = async (): Promise<R[]> =>
    ordered
      ? items(ORDERED)
      : walkPostings(db, scope.table, scope.scopeId, { gram: gram ?? '', after: scope.request.after }, scope.request.limit + 1, (walk) =>
          items({ ...UNDRIVEN, walk, total: carried }),
        );
  if (carried && counts) {
    const rows = await first();
    // An empty page carries no count: nothing matches, or the cursor is past the last match.
    const row = rows[0];
    const total =
      row === undefined
        ? await countByGram(db, counts.source, counts.scopeId, counts.facets.asked, text)
        : Number('search_total' in row ? row.search_total : 0);
    return [rows, total];
  }
  const inIndexOrder = ordered || gram !== undefined;
  if (counted !== undefined) {
    // Nothing matches: no page to read (a short text would be tested against every row to find that).
    if (counted === 0) return [[], 0];
    if (inIndexOrder) return [await first(), counted];
    if (postgres || !indexable(text)) return [await items({ ...UNDRIVEN, substringIndex: indexable(text) }), counted];
    return [await items(planFor(counted)), counted];
  }
  if (inIndexOrder) return Promise.all([first(), count(ordered ? DRIVEN : UNDRIVEN)]);
  if (postgres || !indexable(text)) return Promise.all([items(UNDRIVEN), count(UNDRIVEN)]);
  const total = await count(DRIVEN);
  return [await items(planFor(total)), total];
}

/**
 * What a search counts by grams (src/db/search-counts.ts): its source, scope and facets (asked:
 * the filter's; all: every one). A search with a filter the counts do not keep has none.
 */
export interface SearchCounts {
  source: CountedSearch['source'];
  scopeId: string;
  facets: { asked: string[]; all: string[] };
}

const planFor = (total: number): SearchPlan =>
  total <= DRIVE_UP_TO ? DRIVEN : { ordered: false, driven: false, substringIndex: total < LIKE_FROM };

/** Tables searched by substring, read in index order: SQLite's FTS5 row order (ORDERED), PostgreSQL's postings. */
export type SearchedTable = 'accounts' | 'page_links' | 'audiences';

/** Whether a search for `text` is read with the ORDERED plan (SQLite, indexable text, rows in order). */
export async function searchesInOrder(db: Kysely<Database>, table: SearchedTable, scopeId: string, text: string): Promise<boolean> {
  return !isPostgres(db) && indexable(text) && (await inOrder(db, table, scopeId));
}

/** The trigram whose postings a search for `text` walks (PostgreSQL, indexable text), else undefined. */
export async function postedGram(db: Kysely<Database>, table: SearchedTable, scopeId: string, text: string): Promise<string | undefined> {
  return isPostgres(db) && indexable(text) ? rarestTrigram(db, table, scopeId, text) : undefined;
}

/**
 * Whether a tenant's (a domain's) rows of `table` sort by (created_at, id) exactly as by rowid.
 * Rows are written with the time of their write and ids that grow, so they do, unless a clock
 * stepped back or rows were imported out of order: an insert trigger records that in
 * `search_disorder` (migration 0014), and that scope's searches are then read by their count.
 */
async function inOrder(db: Kysely<Database>, table: SearchedTable, scopeId: string): Promise<boolean> {
  const found = await db
    .selectFrom('search_disorder')
    .select('scope_id')
    .where('table_name', '=', table)
    .where('scope_id', '=', scopeId)
    .executeTakeFirst();
  return found === undefined;
}

/**
 * For `$call` with the ORDERED plan (SQLite): `table`'s rows matching `text` through its FTS table,
 * joined as `fts`, whose rowid is then what the page is ordered by (`orderedBy`). `atStart`: only
 * rows where a column starts with the text (FTS5's initial phrase, `^`): a superset of what
 * `startsWith` keeps, which the caller tests too.
 */
export function joinSubstringIndex(table: SearchedTable, text: string, atStart = false) {
  const fts = `${table}_fts`;
  const phrase = `${atStart ? '^' : ''}${ftsPhrase(text)}`;
  return <DB, TB extends keyof DB, O>(qb: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O> =>
    // The join adds the `fts` alias only; every column the caller reads stays its own table's.
    qb.innerJoin(sql<{ rowid: number }>`${sql.table(fts)}`.as('fts'), (join) =>
      join.on(sql<boolean>`fts.rowid = ${sql.ref(`${table}.rowid`)} and ${sql.ref(`fts.${fts}`)} match ${phrase}`),
    ) as unknown as SelectQueryBuilder<DB, TB, O>;
}

/** What an ORDERED page is ordered by. */
export const orderedBy = sql`fts.rowid`;

/**
 * For `$call`: `table`'s rows in `scopeId` whose `columns` contain `text`, read as `plan` says:
 * through the FTS table in its row order (ORDERED; `atStart`, see `joinSubstringIndex`), among a
 * walk's postings, or tested by `substringMatch`.
 */
export function matchingText(
  db: Kysely<Database>,
  target: { table: SearchedTable; scopeId: string; columns: readonly string[] },
  text: string,
  plan: SearchPlan,
  atStart = false,
) {
  return <DB, TB extends keyof DB, O>(qb: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O> => {
    if (plan.ordered) return qb.$call(joinSubstringIndex(target.table, text, atStart));
    const walked = plan.walk ? qb.$call(joinPostings(target.table, target.scopeId, plan.walk)) : qb;
    return text === '' ? walked : walked.where(substringMatch(db, target.table, target.columns, text, plan.substringIndex));
  };
}

/** What a list's `apply` orders a page read with `plan` by: the FTS row order, the postings' key, or its own key. */
export const pageOrder = (plan: SearchPlan) => (plan.ordered ? orderedBy : plan.walk !== undefined ? POSTING_KEY : undefined);

/** For `$call`: the count `plan` carries, selected as `search_total`, where `searchWithTotal` reads it. */
export function carriedTotal(plan: SearchPlan) {
  return <DB, TB extends keyof DB, O>(qb: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O> =>
    plan.total === undefined ? qb : (qb.select(sql`${plan.total}`.as('search_total')) as unknown as SelectQueryBuilder<DB, TB, O>);
}
