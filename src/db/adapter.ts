import { type DialectAdapter, PostgresAdapter } from 'kysely';

/**
 * Whether `db` (a Kysely instance or a transaction, of any schema) runs on PostgreSQL, else
 * SQLite: the one test of the dialect, for code and migrations alike.
 */
export function isPostgres(db: { getExecutor(): { readonly adapter: DialectAdapter } }): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
