import type { Kysely, RawBuilder, SelectQueryBuilder } from 'kysely';
import type { Database } from '../types.js';

/** Tables searched by substring: each has a substring index, SQLite's FTS5 table in row order and PostgreSQL's postings. */
export type SearchedTable = 'accounts' | 'page_links' | 'audiences';

/** A query of `T`'s rows, nothing selected yet. */
export type Rows<T extends SearchedTable> = SelectQueryBuilder<Database, T, object>;
/** A query of any searched table's rows, as the dialects build it. */
export type AnyRows = Rows<SearchedTable>;

/** What `$call` takes: a change of a query that keeps its tables and selection. */
export type QueryCall = <DB, TB extends keyof DB, O>(qb: SelectQueryBuilder<DB, TB, O>) => SelectQueryBuilder<DB, TB, O>;

/** An expression the rows sort by exactly as by the list's key, or a copy of the key (`keysetList`'s `apply`). */
export type SameOrder = RawBuilder<unknown> | readonly RawBuilder<unknown>[];

/** What every search says: whose rows, which columns, what text, and which rows it may return. */
export interface SearchSpec<T extends SearchedTable> {
  table: T;
  /** The column that scopes the search (the tenant; the domain, for links) and its value. */
  scope: { column: keyof Database[T] & string; id: string };
  /** The lowercased columns searched, as the substring index holds them. */
  columns: readonly (keyof Database[T] & string)[];
  /** The text, lowercased; '' matches every row. */
  text: string;
  /** Conditions of every row the search can return (live rows), tested before the text. */
  where?: (qb: Rows<T>) => Rows<T>;
  /** The caller's filters, tested after the text. */
  filter?: (qb: Rows<T>) => Rows<T>;
}

/**
 * A list newest first, keyset-paged, with its exact count. `order` is the list's `apply` bound to
 * the request (`keysetList`, src/http/pagination.ts); `page` is the same request's limit and cursor.
 */
export interface ListSearch<T extends SearchedTable, Row> extends SearchSpec<T> {
  order: { newestFirst: (sameOrder?: SameOrder) => QueryCall };
  page: { limit: number; after: readonly (string | number)[] | null };
  /**
   * The facets of `search_counts` the search asks for and all of them (src/db/search/counts.ts);
   * undefined when it has a filter the counts do not keep: it is then counted by visiting its matches.
   */
  counted?: { asked: string[]; all: string[] };
  select: (qb: Rows<T>) => SelectQueryBuilder<Database, T, Row>;
}

/** Matches where a column starts with the text first, then the others, each newest first; counted up to `countUpTo`. */
export interface RankedSearch<T extends SearchedTable, Row> extends SearchSpec<T> {
  order: { prefixFirst: { countUpTo: number } };
  page: { limit: number };
  select: (qb: Rows<T>) => SelectQueryBuilder<Database, T, Row>;
  /**
   * Rows that match through another row's text, kept once in that row with its own substring index
   * (an audience through its page's name). They rank as if the text were one of `columns`.
   */
  through?: Through<T>;
}

/** How rows matching through another row are read (`RankedSearch.through`). */
export interface Through<T extends SearchedTable> {
  /**
   * The scope's live rows it matches: `walk`, read by walking `T`'s rows newest first (when
   * many match, a page fills soon), else from the other rows (when few do, sorting them is cheaper).
   */
  rows: (walk: boolean) => Rows<T>;
  /**
   * The rows whose other text starts with the search's: that as a condition on `T`'s rows, and
   * the rows, read as `rows` reads them (one page's name can carry thousands of audiences).
   * Undefined when no other row's text starts with it.
   */
  starting?: { condition: RawBuilder<boolean>; rows: (walk: boolean) => Rows<T> };
}

/** A page of a search: one row more than the limit when more match; the count, or null beyond `countUpTo`. */
export interface Found<Row, Total extends number | null = number> {
  rows: Row[];
  totalCount: Total;
}

/** What a read of matches selects, and any further condition. */
export type Shape<Row> = (qb: AnyRows) => SelectQueryBuilder<Database, SearchedTable, Row>;

/** How a prefix-first search reads its matches (`prefix-first.ts`), on one database. */
export interface MatchReader {
  /**
   * At most `take` matches, read newest first unless `unordered`; `atStart`: only rows where a
   * column may start with the text (a superset, which `shape`'s conditions narrow).
   */
  read<Row>(atStart: boolean, take: number, shape: Shape<Row>, unordered?: boolean): Promise<Row[]>;
}

/** Tables with a substring index of their own that no search lists: matched through by another's (`RankedSearch.through`). */
export type IndexedTable = SearchedTable | 'pages';

/** One database's implementation of substring search, side by side with the other's. */
export interface SearchDialect {
  /** `table.column` contains `text`, asked of the column's substring index when the text has a trigram. */
  contains(table: IndexedTable, column: string, text: string): RawBuilder<boolean>;
  newestFirst<T extends SearchedTable, Row>(db: Kysely<Database>, search: ListSearch<T, Row>): Promise<Found<Row>>;
  /** The reader of a prefix-first search's matches. */
  matches<T extends SearchedTable>(db: Kysely<Database>, search: SearchSpec<T>): Promise<MatchReader>;
  /** `column` from `from` to below `below` in code-point order: a range of a name index. */
  nameRange(db: Kysely<Database>, column: string, from: string, below: string): RawBuilder<boolean>;
  /** For `$call`: how rows of a name index's range are read, `take` at most. */
  byName(table: SearchedTable, take: number): QueryCall;
}

/** A caller's condition on its own table applied to a dialect's query of any table. */
export const applyTo = <T extends SearchedTable>(qb: AnyRows, change?: (qb: Rows<T>) => Rows<T>): AnyRows =>
  change ? (change(qb as unknown as Rows<T>) as unknown as AnyRows) : qb;

/** A caller's selection on its own table applied to a dialect's query of any table. */
export const selected = <T extends SearchedTable, Row>(
  qb: AnyRows,
  select: (qb: Rows<T>) => SelectQueryBuilder<Database, T, Row>,
): SelectQueryBuilder<Database, SearchedTable, Row> =>
  select(qb as unknown as Rows<T>) as unknown as SelectQueryBuilder<Database, SearchedTable, Row>;
