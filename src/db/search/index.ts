import type { Kysely } from 'kysely';
import { isPostgres } from '../adapter.js';
import type { Database } from '../types.js';
import { postgresSearch } from './postgres.js';
import { prefixFirst } from './prefix-first.js';
import { sqliteSearch } from './sqlite.js';
import type { Found, IndexedTable, ListSearch, RankedSearch, SearchDialect, SearchedTable } from './types.js';

export { contains, containsAsciiFolded, startsWith } from './like.js';
export type { ListSearch, RankedSearch, Rows, SearchedTable } from './types.js';

/** Each database's own implementation, side by side: what differs by dialect is chosen here, once. */
const byDialect = <I>(db: Kysely<Database>, implementations: { sqlite: I; postgres: I }): I =>
  isPostgres(db) ? implementations.postgres : implementations.sqlite;

/** `table.column` contains `text` (lowercased), through the column's own substring index where it can serve. */
export const containsIndexed = (db: Kysely<Database>, table: IndexedTable, column: string, text: string) =>
  byDialect<SearchDialect>(db, { sqlite: sqliteSearch, postgres: postgresSearch }).contains(table, column, text);

/**
 * Substring search, declared once by what it searches: `table`'s rows in `scope` whose `columns`
 * contain `text`, read in `order` (newest first, keyset-paged, counted exactly; or prefix matches
 * first, counted up to a bound), one `page` of them. How each database finds them fast is its own
 * implementation (`sqlite.ts`: FTS5 in row order and gram counts; `postgres.ts`: trigram postings);
 * both give the same rows in the same order (test/db/search-counts.test.ts).
 */
export function textSearch<T extends SearchedTable, Row>(db: Kysely<Database>, search: ListSearch<T, Row>): Promise<Found<Row>>;
export function textSearch<T extends SearchedTable, Row>(
  db: Kysely<Database>,
  search: RankedSearch<T, Row>,
): Promise<Found<Row, number | null>>;
export function textSearch<T extends SearchedTable, Row>(
  db: Kysely<Database>,
  search: ListSearch<T, Row> | RankedSearch<T, Row>,
): Promise<Found<Row, number | null>> {
  const dialect = byDialect<SearchDialect>(db, { sqlite: sqliteSearch, postgres: postgresSearch });
  return 'prefixFirst' in search.order
    ? prefixFirst(db, search as RankedSearch<T, Row>, dialect)
    : dialect.newestFirst(db, search as ListSearch<T, Row>);
}
