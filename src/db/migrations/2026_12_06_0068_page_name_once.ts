import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../adapter.js';
import { addPostings, removePostings, texts } from './2026_11_24_0015_search_postings.js';
import type { PostedSearch } from './search-sources.js';

/**
 * A page's name lives in its own row only (issue 50). Audiences carried a copy of it
 * (`page_name`, `page_name_lc`) so that audience search read one table; a rename rewrote every
 * audience of the page, and with each its substring index (SQLite's FTS rows, PostgreSQL's trigram
 * GIN entries and postings): thousands of writes for one field. Audience search now matches a
 * page's name through the page (src/audiences/search.ts), which has a lowercased copy in the same
 * row (`pages.name_lc`, what search compares) and its own substring index.
 *
 * Also: SQLite's FTS row of an audience is rewritten only when its name changes, not on every
 * write of the row (a version published, an override set).
 */

/** The audiences' postings from now on: their own names only (PostgreSQL). */
export const AUDIENCE_POSTINGS: PostedSearch = {
  table: 'audiences',
  scope: 'tenant_id',
  columns: ['effective_name_lc'],
  liveColumns: ['archived_at', 'page_deleted'],
  live: (row) => `${row}.archived_at is null and ${row}.page_deleted = 0`,
};

/** 0044's function for the audiences' postings, over their own names only. */
function postingsFunction(search: PostedSearch): string {
  const { table, scope, columns, liveColumns, live } = search;
  const watched = [...new Set(['id', scope, 'created_at', ...columns, ...liveColumns])].join(', ');
  const postingsOf = (a: string, b: string) => `select r.${scope} as scope_id, g.gram, r.created_at, r.id
      from (select ${watched} from ${a} except select ${watched} from ${b}) r, search_trigrams(${texts(search, 'r')}) g
      where ${live('r')}`;
  return `create or replace function search_postings_${table}() returns trigger language plpgsql set jit = off as $$
    begin
      if tg_op = 'INSERT' then ${addPostings(search, 'new_rows r')}
      elsif tg_op = 'DELETE' then ${removePostings(search, 'old_rows o')}
      else
        with was as (${postingsOf('old_rows', 'new_rows')}), becomes as (${postingsOf('new_rows', 'old_rows')}),
        gone as (
          delete from search_postings p using (select * from was except select * from becomes) d
          where p.source = '${table}' and p.scope_id = d.scope_id and p.gram = d.gram and p.created_at = d.created_at and p.row_id = d.id
        )
        insert into search_postings (source, scope_id, gram, created_at, row_id)
        select '${table}', scope_id, gram, created_at, id from (select * from becomes except select * from was) a
        on conflict do nothing;
      end if;
      return null;
    end $$`;
}

/** SQLite: an FTS5 trigram table over `column` of `table`, its update trigger fired by that column only. */
async function ftsOf(db: Kysely<unknown>, table: string, column: string): Promise<void> {
  const fts = `${table}_fts`;
  await sql
    .raw(`create virtual table ${fts} using fts5(${column}, content='${table}', content_rowid='rowid', tokenize='trigram')`)
    .execute(db);
  await sql
    .raw(`create trigger ${fts}_ai after insert on ${table} begin
    insert into ${fts} (rowid, ${column}) values (new.rowid, new.${column}); end`)
    .execute(db);
  await sql
    .raw(`create trigger ${fts}_ad after delete on ${table} begin
    insert into ${fts} (${fts}, rowid, ${column}) values ('delete', old.rowid, old.${column}); end`)
    .execute(db);
  await sql
    .raw(`create trigger ${fts}_au after update of ${column} on ${table} begin
    insert into ${fts} (${fts}, rowid, ${column}) values ('delete', old.rowid, old.${column});
    insert into ${fts} (rowid, ${column}) values (new.rowid, new.${column}); end`)
    .execute(db);
  await sql.raw(`insert into ${fts} (${fts}) values ('rebuild')`).execute(db);
}

/** Pages' lowercased names as JavaScript lowercases them (the SQL `lower` of SQLite folds ASCII only). */
async function fillNames(db: Kysely<unknown>): Promise<void> {
  await sql`update pages set name_lc = lower(name)`.execute(db);
  let after = '';
  for (;;) {
    const { rows } = await sql<{ id: string; name: string; name_lc: string }>`select id, name, name_lc from pages
      where id > ${after} order by id limit 1000`.execute(db);
    for (const row of rows) {
      const lc = row.name.toLowerCase();
      if (lc !== row.name_lc) await sql`update pages set name_lc = ${lc} where id = ${row.id}`.execute(db);
    }
    const last = rows.at(-1);
    if (!last || rows.length < 1000) return;
    after = last.id;
  }
}

/**
 * PostgreSQL runs the pending migrations in one transaction, and refuses to alter a table with
 * deferred trigger events pending (0044's site sequence, fired by an earlier migration's writes):
 * they fire now, and this transaction's later writes fire theirs at once.
 */
async function firePendingTriggers(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) await sql`set constraints all immediate`.execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await firePendingTriggers(db);
  await sql`alter table pages add column name_lc text not null default ''`.execute(db);
  // PostgreSQL: made before the names are written, whose deferred triggers (the site sequence)
  // would otherwise be pending, which refuses an index. Search compares the live pages' names.
  if (isPostgres(db)) {
    await sql`create index pages_name_lc_trgm on pages using gin (name_lc gin_trgm_ops) where deleted_at is null`.execute(db);
  }
  await fillNames(db);
  if (isPostgres(db)) {
    await sql`drop index audiences_page_name_lc_prefix_idx`.execute(db);
    await sql.raw(postingsFunction(AUDIENCE_POSTINGS)).execute(db);
    // Made again from the audiences' own names: the page names' trigrams go.
    await sql`delete from search_postings where source = 'audiences'`.execute(db);
    await sql.raw(addPostings(AUDIENCE_POSTINGS, 'audiences r')).execute(db);
  } else {
    for (const suffix of ['ai', 'ad', 'au']) await sql.raw(`drop trigger audiences_fts_${suffix}`).execute(db);
    await sql`drop table audiences_fts`.execute(db);
    await ftsOf(db, 'audiences', 'effective_name_lc');
    await ftsOf(db, 'pages', 'name_lc');
    await sql`drop index audiences_page_name_lc_idx`.execute(db);
  }
  // PostgreSQL drops the column's trigram index with it.
  await sql`alter table audiences drop column page_name_lc`.execute(db);
  await sql`alter table audiences drop column page_name`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await firePendingTriggers(db);
  await sql`alter table audiences add column page_name text not null default ''`.execute(db);
  await sql`alter table audiences add column page_name_lc text not null default ''`.execute(db);
  // Indexes before the copies are written (PostgreSQL refuses one while the writes' deferred triggers are pending).
  if (isPostgres(db)) {
    await sql`create index audiences_page_name_lc_trgm on audiences using gin (page_name_lc gin_trgm_ops)`.execute(db);
    await sql`create index audiences_page_name_lc_prefix_idx on audiences (tenant_id, (page_name_lc collate "C"))
      where archived_at is null and page_deleted = 0`.execute(db);
    await sql.raw(postingsFunction({ ...AUDIENCE_POSTINGS, columns: ['effective_name_lc', 'page_name_lc'] })).execute(db);
  } else {
    await sql`create index audiences_page_name_lc_idx on audiences (tenant_id, page_name_lc)
      where archived_at is null and page_deleted = 0`.execute(db);
  }
  await sql`update audiences set page_name = (select p.name from pages p where p.id = audiences.page_id),
    page_name_lc = (select p.name_lc from pages p where p.id = audiences.page_id)`.execute(db);
  if (isPostgres(db)) {
    await sql`delete from search_postings where source = 'audiences'`.execute(db);
    await sql.raw(addPostings({ ...AUDIENCE_POSTINGS, columns: ['effective_name_lc', 'page_name_lc'] }, 'audiences r')).execute(db);
    await sql`drop index pages_name_lc_trgm`.execute(db);
  } else {
    for (const table of ['audiences', 'pages']) {
      for (const suffix of ['ai', 'ad', 'au']) await sql.raw(`drop trigger ${table}_fts_${suffix}`).execute(db);
      await sql.raw(`drop table ${table}_fts`).execute(db);
    }
    // As 0002 made it: both columns, every update.
    const cols = 'effective_name_lc, page_name_lc';
    await sql
      .raw(`create virtual table audiences_fts using fts5(${cols}, content='audiences', content_rowid='rowid', tokenize='trigram')`)
      .execute(db);
    await sql
      .raw(`create trigger audiences_fts_ai after insert on audiences begin
      insert into audiences_fts (rowid, ${cols}) values (new.rowid, new.effective_name_lc, new.page_name_lc); end`)
      .execute(db);
    await sql
      .raw(`create trigger audiences_fts_ad after delete on audiences begin
      insert into audiences_fts (audiences_fts, rowid, ${cols}) values ('delete', old.rowid, old.effective_name_lc, old.page_name_lc); end`)
      .execute(db);
    await sql
      .raw(`create trigger audiences_fts_au after update on audiences begin
      insert into audiences_fts (audiences_fts, rowid, ${cols}) values ('delete', old.rowid, old.effective_name_lc, old.page_name_lc);
      insert into audiences_fts (rowid, ${cols}) values (new.rowid, new.effective_name_lc, new.page_name_lc); end`)
      .execute(db);
    await sql`insert into audiences_fts (audiences_fts) values ('rebuild')`.execute(db);
  }
  await sql`alter table pages drop column name_lc`.execute(db);
}
