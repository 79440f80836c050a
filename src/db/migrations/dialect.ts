import { PostgresAdapter, sql, type Kysely, type RawBuilder } from 'kysely';

export function isPostgres<DB>(db: Kysely<DB>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * The one place where migrations differ by dialect: column types.
 * - timestamps: timestamptz on PostgreSQL, ISO 8601 text on SQLite (which sorts as time does);
 * - ids: byte-order collation on PostgreSQL (SQLite's default), so keyset order is the same on both;
 * - bytes: bytea on PostgreSQL, blob on SQLite.
 * Everything else (text, integer, bigint, JSON as text, booleans as 0/1) is shared.
 */
export function columnTypes(db: Kysely<unknown>): {
  timestamp: 'timestamptz' | 'text';
  id: RawBuilder<unknown> | 'text';
  bytes: 'bytea' | 'blob';
} {
  return isPostgres(db)
    ? { timestamp: 'timestamptz', id: sql`text collate "C"`, bytes: 'bytea' }
    : { timestamp: 'text', id: 'text', bytes: 'blob' };
}

/**
 * An index that serves `LIKE '%text%'` on lowercased `columns` of `table`.
 * PostgreSQL: a pg_trgm GIN index per column. SQLite: an FTS5 trigram table `<table>_fts` over the
 * columns, kept in step with the table by triggers (see `src/db/search.ts` for the queries).
 */
export async function createSubstringIndex(db: Kysely<unknown>, table: string, columns: string[]): Promise<void> {
  if (isPostgres(db)) {
    await sql`create extension if not exists pg_trgm`.execute(db);
    for (const column of columns) {
      await sql`create index ${sql.id(`${table}_${column}_trgm`)} on ${sql.table(table)} using gin (${sql.ref(column)} gin_trgm_ops)`.execute(
        db,
      );
    }
    return;
  }
  const fts = `${table}_fts`;
  const cols = sql.join(columns.map((c) => sql.ref(c)));
  const newCols = sql.join(columns.map((c) => sql.ref(`new.${c}`)));
  const oldCols = sql.join(columns.map((c) => sql.ref(`old.${c}`)));
  await sql`create virtual table ${sql.table(fts)} using fts5(${cols}, content=${sql.lit(table)}, content_rowid='rowid', tokenize='trigram')`.execute(
    db,
  );
  await sql`create trigger ${sql.id(`${fts}_ai`)} after insert on ${sql.table(table)} begin
    insert into ${sql.table(fts)} (rowid, ${cols}) values (new.rowid, ${newCols}); end`.execute(db);
  await sql`create trigger ${sql.id(`${fts}_ad`)} after delete on ${sql.table(table)} begin
    insert into ${sql.table(fts)} (${sql.table(fts)}, rowid, ${cols}) values ('delete', old.rowid, ${oldCols}); end`.execute(db);
  await sql`create trigger ${sql.id(`${fts}_au`)} after update on ${sql.table(table)} begin
    insert into ${sql.table(fts)} (${sql.table(fts)}, rowid, ${cols}) values ('delete', old.rowid, ${oldCols});
    insert into ${sql.table(fts)} (rowid, ${cols}) values (new.rowid, ${newCols}); end`.execute(db);
}
