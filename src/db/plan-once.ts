import { sql, type CompiledQuery, type QueryExecutorProvider, type RawBuilder } from 'kysely';
import { isPostgres } from './adapter.js';

/**
 * `value` bound as `+?` on SQLite, as is on PostgreSQL (where `+` on text is an error). With the
 * statistics of ANALYZE (sqlite_stat4, which better-sqlite3's SQLite keeps), a bare `?` compared
 * with an indexed column or on the right of LIKE makes SQLite plan the statement anew on every run
 * for the value bound, which cost several times a keyed lookup itself. `+?` is a no-op on the value
 * and, like `?`, gives it no affinity: SQLite plans the statement once. For conditions whose plan
 * does not depend on the value. The one place this is written: prepared statements
 * (db/prepared.ts), searches (db/search/) and the analytics rollups all bind through it. Given a
 * column (`sql.ref`), the same `+` keeps SQLite from serving it by an index, so that its rows are
 * walked in another index's order (audiences/search.ts); PostgreSQL has no such hint.
 */
export function planOnce<T>(db: Parameters<typeof isPostgres>[0], value: T): RawBuilder<T> {
  return isPostgres(db) ? sql<T>`${value}` : sql<T>`+${value}`;
}

/**
 * A compiled statement's SQLite text with every parameter bound as `planOnce` binds one, for
 * statements whose plan depends on none of their values (db/prepared.ts). Left as is on
 * PostgreSQL, and if a `?` of the text is not a parameter.
 */
export function planEachOnce(db: Parameters<typeof isPostgres>[0] & QueryExecutorProvider, query: CompiledQuery): string {
  if (isPostgres(db) || query.sql.split('?').length - 1 !== query.parameters.length) return query.sql;
  return query.sql.replaceAll('?', planOnce(db, null).compile(db).sql);
}
