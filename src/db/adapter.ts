import { type DialectAdapter, PostgresAdapter, type QueryExecutorProvider, sql } from 'kysely';

/**
 * Whether `db` (a Kysely instance or a transaction, of any schema) runs on PostgreSQL, else
 * SQLite: the one test of the dialect, for code and migrations alike.
 */
export function isPostgres(db: { getExecutor(): { readonly adapter: DialectAdapter } }): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** The PostgreSQL schema `db` creates in and finds first: the first existing one of its search_path. */
export async function currentSchema(db: QueryExecutorProvider): Promise<string> {
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]?.schema;
  if (!schema) throw new Error('The database connection has no current schema (check search_path)');
  return schema;
}
