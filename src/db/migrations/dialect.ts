import { PostgresAdapter, sql, type Kysely, type RawBuilder } from 'kysely';

export function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * The one place where migrations differ by dialect: column types.
 * - timestamps: timestamptz on PostgreSQL, ISO 8601 text on SQLite (which sorts as time does);
 * - ids: byte-order collation on PostgreSQL (SQLite's default), so keyset order is the same on both.
 * Everything else (text, integer, bigint, JSON as text, booleans as 0/1) is shared.
 */
export function columnTypes(db: Kysely<unknown>): { timestamp: 'timestamptz' | 'text'; id: RawBuilder<unknown> | 'text' } {
  return isPostgres(db) ? { timestamp: 'timestamptz', id: sql`text collate "C"` } : { timestamp: 'text', id: 'text' };
}
