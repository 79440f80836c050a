import { createHash } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { currentSchema, isPostgres } from '../db/adapter.js';
import { lockExclusive } from '../db/locks.js';
import type { Database } from '../db/types.js';
import { COLLECT_SQL } from './collect.sql.js';

/** Which text of collect.sql.ts the database's `pam_collect` was made from: kept as the function's comment. */
export const COLLECT_SQL_HASH = `collect.sql sha256:${createHash('sha256').update(COLLECT_SQL.join('\n;\n')).digest('hex')}`;

const appliedHash = async (db: Kysely<Database>): Promise<string | null> => {
  const { rows } = await sql<{ hash: string | null }>`select obj_description(p.oid, 'pg_proc') as hash from pg_proc p
    where p.proname = 'pam_collect' and p.pronamespace = current_schema()::regnamespace`.execute(db);
  return rows.length === 1 ? (rows[0]?.hash ?? null) : null;
};

/**
 * Makes PostgreSQL's `pam_collect` the one collect.sql.ts holds, at start, after the migrations:
 * nothing when the function's comment already names this text's hash (every start but the first
 * after a change). Several instances starting at once take an advisory lock in turn and look
 * again under it, so one of them applies it; the others find it done. A report running meanwhile
 * finishes on the function it started with (`create or replace` is transactional). SQLite has no
 * such function: its reports take the transaction of sql-store.ts. True when it was applied.
 */
export async function applyCollectFunction(db: Kysely<Database>): Promise<boolean> {
  if (!isPostgres(db) || (await appliedHash(db)) === COLLECT_SQL_HASH) return false;
  return db.transaction().execute(async (trx) => {
    const schema = await currentSchema(trx);
    // Per schema: deployments sharing a server in schemas of their own do not wait for each other.
    await lockExclusive(trx, `pam_collect:${schema}`);
    if ((await appliedHash(trx)) === COLLECT_SQL_HASH) return false;
    // This schema alone, for the statements below: unqualified, `drop function if exists` of an
    // earlier signature this schema no longer has would drop another deployment's (a schema
    // behind this one on the search_path, such as `public`), and `comment on function` would
    // find two.
    await sql`select set_config('search_path', quote_ident(${schema}), true)`.execute(trx);
    for (const statement of COLLECT_SQL) await sql.raw(statement).execute(trx);
    await sql.raw(`comment on function pam_collect is '${COLLECT_SQL_HASH}'`).execute(trx);
    return true;
  });
}
