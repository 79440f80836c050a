import { sql, type Kysely } from 'kysely';
import { POSTED_SEARCHES, type PostedSearch } from './search-sources.js';
import { isPostgres } from '../adapter.js';
import { columnTypes } from './dialect.js';

/**
 * PostgreSQL only: trigram postings in list order (src/db/search-postings.ts), kept by statement
 * triggers and filled from the rows already stored; and, for audience search's prefix matches,
 * the live audiences' names indexed in code-point order (SQLite has both in 0014's terms: FTS5
 * in row order and its name indexes).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  const { id, timestamp } = columnTypes(db);
  await db.schema
    .createTable('search_postings')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('scope_id', id, (c) => c.notNull())
    .addColumn('gram', 'text', (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('row_id', id, (c) => c.notNull())
    .execute();
  await sql`create function search_trigrams(texts text[]) returns table (gram text) language sql immutable parallel safe as $$
      select distinct substr(t, i, 3) from unnest(texts) as t, generate_series(1, char_length(t) - 2) as i
    $$`.execute(db);
  // CREATE TRIGGER locks out writers until this migration commits: no row is written between the
  // fill and the trigger.
  for (const search of POSTED_SEARCHES) await createPostings(db, search);
  for (const search of POSTED_SEARCHES) {
    await sql
      .raw(`insert into search_postings (source, scope_id, gram, created_at, row_id)
        select '${search.table}', r.${search.scope}, g.gram, r.created_at, r.id
        from ${search.table} r, search_trigrams(${texts(search, 'r')}) g where ${search.live('r')}`)
      .execute(db);
  }
  // Built after the fill: one sort instead of millions of insertions into the index.
  await sql`alter table search_postings add constraint search_postings_pk primary key (source, scope_id, gram, created_at, row_id)`.execute(
    db,
  );
  for (const column of ['effective_name_lc', 'page_name_lc']) {
    await sql
      .raw(`create index audiences_${column}_prefix_idx on audiences (tenant_id, (${column} collate "C"))
        where archived_at is null and page_deleted = 0`)
      .execute(db);
  }
  await sql`analyze search_postings`.execute(db);
}

export const texts = (search: PostedSearch, row: string) => `array[${search.columns.map((c) => `${row}.${c}`).join(', ')}]`;

/** The postings of the live rows of `rows` (aliased `r`), inserted; migration 0044 reuses it. */
export const addPostings = (search: PostedSearch, rows: string) => `insert into search_postings (source, scope_id, gram, created_at, row_id)
    select '${search.table}', r.${search.scope}, g.gram, r.created_at, r.id from ${rows}, search_trigrams(${texts(search, 'r')}) g
    where ${search.live('r')} on conflict do nothing;`;

/** The postings of the live rows of `rows` (aliased `o`), deleted; migration 0044 reuses it. */
export const removePostings = (search: PostedSearch, rows: string) => `delete from search_postings p using (
      select o.${search.scope} as scope_id, g.gram, o.created_at, o.id from ${rows}, search_trigrams(${texts(search, 'o')}) g where ${search.live('o')}
    ) d where p.source = '${search.table}' and p.scope_id = d.scope_id and p.gram = d.gram and p.created_at = d.created_at and p.row_id = d.id;`;

async function createPostings(db: Kysely<unknown>, search: PostedSearch): Promise<void> {
  const { table, scope, columns, liveColumns } = search;
  const watched = [...new Set([scope, 'created_at', ...columns, ...liveColumns])];
  const changed = `(${watched.map((c) => `r.${c}`).join(', ')}) is distinct from (${watched.map((c) => `o.${c}`).join(', ')})`;
  const changedRows = (alias: 'r' | 'o') =>
    `${alias === 'r' ? 'new_rows r join old_rows o' : 'old_rows o join new_rows r'} on r.id = o.id and ${changed}`;
  const fn = `search_postings_${table}`;
  await sql
    // JIT off: see search_counts' functions (migrations/dialect.ts).
    .raw(`create function ${fn}() returns trigger language plpgsql set jit = off as $$
      begin
        if tg_op = 'INSERT' then ${addPostings(search, 'new_rows r')}
        elsif tg_op = 'DELETE' then ${removePostings(search, 'old_rows o')}
        else
          ${removePostings(search, changedRows('o'))}
          ${addPostings(search, changedRows('r'))}
        end if;
        return null;
      end $$`)
    .execute(db);
  await sql
    .raw(`create trigger ${fn}_ins after insert on ${table} referencing new table as new_rows for each statement execute function ${fn}()`)
    .execute(db);
  await sql
    .raw(`create trigger ${fn}_del after delete on ${table} referencing old table as old_rows for each statement execute function ${fn}()`)
    .execute(db);
  await sql
    .raw(
      `create trigger ${fn}_upd after update on ${table} referencing old table as old_rows new table as new_rows for each statement execute function ${fn}()`,
    )
    .execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  for (const { table } of POSTED_SEARCHES) {
    for (const suffix of ['ins', 'del', 'upd']) await sql.raw(`drop trigger search_postings_${table}_${suffix} on ${table}`).execute(db);
    await sql.raw(`drop function search_postings_${table}()`).execute(db);
  }
  await sql`drop index audiences_effective_name_lc_prefix_idx`.execute(db);
  await sql`drop index audiences_page_name_lc_prefix_idx`.execute(db);
  await sql`drop function search_trigrams(text[])`.execute(db);
  await db.schema.dropTable('search_postings').execute();
}
