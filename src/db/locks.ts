import { sql, type Transaction } from 'kysely';
import { isPostgres } from './adapter.js';
import type { Database } from './types.js';

/**
 * Runs the rest of `trx` alone across every instance sharing the database: a PostgreSQL advisory
 * lock held until the transaction ends. SQLite has a single writer per file and needs nothing.
 */
export async function lockExclusive(trx: Transaction<Database>, name: string): Promise<void> {
  if (isPostgres(trx)) {
    await sql`select pg_advisory_xact_lock(hashtext(${name}))`.execute(trx);
  }
}
