import { PostgresAdapter, type Kysely } from 'kysely';

/**
 * The one place where migrations differ by dialect: the column type of timestamps.
 * Everything else (text, integer, bigint, JSON as text, booleans as 0/1) is shared.
 */
export function timestampType(db: Kysely<unknown>): 'timestamptz' | 'text' {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'timestamptz' : 'text';
}
