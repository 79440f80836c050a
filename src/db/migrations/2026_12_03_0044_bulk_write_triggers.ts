import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../adapter.js';
import { addPostings, removePostings, texts } from './2026_11_24_0015_search_postings.js';
import { POSTED_SEARCHES, type PostedSearch } from './search-sources.js';

/**
 * PostgreSQL only: two triggers made a write of many rows (a page of 10,000 audiences renamed)
 * cost minutes, and held every other write of the tenant for as long.
 *
 * - search_postings (0015): an update paired old and new rows with a join the planner, guessing a
 *   transition table's size, ran as a nested loop: 10,000 × 10,000. The rows that changed are now
 *   found with EXCEPT (hashed or sorted, linear whatever the guess), and only the trigrams that
 *   changed are deleted and inserted: a renamed page keeps its audiences' name trigrams.
 * - the tenant's change sequence (0024, 0025): a row trigger moved it once per row, each move a new
 *   version of one row that the next had to walk past, from the transaction's first write to its
 *   end, while every other writer of the tenant waited for that row. The triggers are now deferred
 *   to commit and move it once per tenant and transaction: writers of one tenant wait on each
 *   other only while they commit.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  for (const search of POSTED_SEARCHES) await sql.raw(postingsFunction(search)).execute(db);
  await sql`
    create or replace function site_change() returns trigger language plpgsql as $$
    declare
      tenant text := case when tg_op = 'DELETE' then old.tenant_id else new.tenant_id end;
      -- The tenants this transaction has moved already, as ' a b ': usually one.
      moved text := coalesce(current_setting('pam.site_moved', true), '');
    begin
      if position(' ' || tenant || ' ' in moved) > 0 then return null; end if;
      insert into change_counters (scope, value) values ('site:' || tenant, 1)
      on conflict (scope) do update set value = change_counters.value + 1;
      -- Delivered at commit to every instance's listener (src/db/change-feed.ts).
      perform pg_notify('pam_site', tenant);
      perform set_config('pam.site_moved', coalesce(nullif(moved, ''), ' ') || tenant || ' ', true);
      return null;
    end $$`.execute(db);
  for (const t of await siteChangeTriggers(db)) {
    await sql.raw(`drop trigger ${t.name} on ${t.table}`).execute(db);
    await sql
      .raw(t.definition.replace(/^CREATE TRIGGER /, 'CREATE CONSTRAINT TRIGGER ').replace(/ FOR EACH ROW /, ` ${DEFERRED} FOR EACH ROW `))
      .execute(db);
  }
}

const DEFERRED = 'DEFERRABLE INITIALLY DEFERRED';

/** Every trigger that moves the tenant's change sequence, whichever migration made it. */
async function siteChangeTriggers(db: Kysely<unknown>): Promise<{ name: string; table: string; definition: string }[]> {
  const { rows } = await sql<{ name: string; table: string; definition: string }>`
    select quote_ident(t.tgname) as name, t.tgrelid::regclass::text as table, pg_get_triggerdef(t.oid) as definition
    from pg_trigger t where t.tgfoid = 'site_change'::regproc and not t.tgisinternal order by 2, 1`.execute(db);
  return rows;
}

/** 0015's function, its update branch made linear and incremental. */
function postingsFunction(search: PostedSearch): string {
  const { table, scope, columns, liveColumns, live } = search;
  const watched = [...new Set(['id', scope, 'created_at', ...columns, ...liveColumns])].join(', ');
  /** The postings of the rows of `a` whose watched columns differ from `b`'s (for old rows: as they were). */
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

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  for (const t of await siteChangeTriggers(db)) {
    await sql.raw(`drop trigger ${t.name} on ${t.table}`).execute(db);
    await sql.raw(t.definition.replace(/^CREATE CONSTRAINT TRIGGER /, 'CREATE TRIGGER ').replace(` ${DEFERRED} `, ' ')).execute(db);
  }
  // The functions keep their new bodies: they compute what 0015's and 0024's did.
}
