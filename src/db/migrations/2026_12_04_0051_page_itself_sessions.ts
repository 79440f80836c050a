import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../adapter.js';

/**
 * A page served as itself (no home audience) is measured and takes leads (issue 45): its visits'
 * sessions name the page's own id as their `audience_id`, which is no audience's id. So the
 * column's reference to `audiences` goes; an audience's sessions are still written with its id.
 *
 * SQLite cannot drop a reference: the table is rebuilt in one transaction, from its own stored
 * definition with the reference cut out (so columns added by other migrations are kept as they
 * are), and its indexes made again from theirs. Visit events refer to these rows: with the check
 * deferred, dropping counts them as orphans and putting each row back counts them found again
 * (as migration 0016 does).
 */
const REFERENCE = /("audience_id" text not null) references "audiences" \("id"\)/;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    const { rows } = await sql<{ name: string }>`
      select conname as name from pg_constraint
      where conrelid = 'audience_sessions'::regclass and contype = 'f'
        and confrelid = 'audiences'::regclass`.execute(db);
    for (const { name } of rows) await sql`alter table audience_sessions drop constraint ${sql.id(name)}`.execute(db);
    return;
  }
  await rebuild(db, (table) => table.replace(REFERENCE, '$1'));
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // The page itself's sessions name no audience: they (and their events) cannot stay under the reference.
  await sql`delete from visit_events where session_id in (
    select s.id from audience_sessions s where not exists (select 1 from audiences a where a.id = s.audience_id))`.execute(db);
  await sql`delete from audience_sessions where audience_id not in (select id from audiences)`.execute(db);
  if (isPostgres(db)) {
    await sql`alter table audience_sessions add foreign key (audience_id) references audiences (id)`.execute(db);
    return;
  }
  await rebuild(db, (table) => table.replace('"audience_id" text not null', '"audience_id" text not null references "audiences" ("id")'));
}

async function rebuild(db: Kysely<unknown>, change: (table: string) => string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ type: string; sql: string | null }>`
      select type, sql from sqlite_master where tbl_name = 'audience_sessions' and type in ('table', 'index')`.execute(trx);
    const table = rows.find((r) => r.type === 'table')?.sql;
    if (!table) throw new Error('audience_sessions has no stored definition');
    const changed = change(table);
    if (changed === table) throw new Error('audience_sessions: the audience reference was not where expected');
    // An automatic index (the primary key's) has no statement: the table's definition makes it again.
    const indexes = rows.filter((r) => r.type === 'index' && r.sql !== null).map((r) => r.sql as string);
    await sql`pragma defer_foreign_keys = on`.execute(trx);
    await sql`create temp table audience_sessions_copy as select * from audience_sessions`.execute(trx);
    await sql`drop table audience_sessions`.execute(trx);
    await sql.raw(changed).execute(trx);
    await sql`insert into audience_sessions select * from audience_sessions_copy`.execute(trx);
    await sql`drop table audience_sessions_copy`.execute(trx);
    for (const index of indexes) await sql.raw(index).execute(trx);
  });
}
