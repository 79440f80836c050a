import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../adapter.js';

/**
 * PostgreSQL only: a tenant's change sequence in eight rows instead of one (issue 50).
 *
 * 0044 moved `site:<tenant>` once per transaction, at commit: still every writer of a tenant took
 * the same row's lock at its commit and held it through the commit's flush, so 50 concurrent
 * writers of one tenant committed one after another. Each connection now moves the row of its own
 * shard (`site:<tenant>`, `site:<tenant>#1` … `#7`, by its backend's pid), and a reader sums them
 * in one statement (db/changes.ts, `counterRows`): every committed change still moves the sum, in
 * the same snapshot as what it changed, so a cache keyed by it is never stale. Numbers frozen
 * here: db/changes.ts reads the same eight names. SQLite has one writer and keeps one row.
 */
const SHARDS = 8;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`
    create or replace function site_change() returns trigger language plpgsql as $$
    declare
      tenant text := case when tg_op = 'DELETE' then old.tenant_id else new.tenant_id end;
      -- The tenants this transaction has moved already, as ' a b ': usually one.
      moved text := coalesce(current_setting('pam.site_moved', true), '');
      shard int := pg_backend_pid() % ${sql.lit(SHARDS)};
      counter text := 'site:' || tenant || case when shard = 0 then '' else '#' || shard end;
    begin
      if position(' ' || tenant || ' ' in moved) > 0 then return null; end if;
      insert into change_counters (scope, value) values (counter, 1)
      on conflict (scope) do update set value = change_counters.value + 1;
      -- Delivered at commit to every instance's listener (src/db/change-feed.ts).
      perform pg_notify('pam_site', tenant);
      perform set_config('pam.site_moved', coalesce(nullif(moved, ''), ' ') || tenant || ' ', true);
      return null;
    end $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  // 0044's body, and every shard folded back into its tenant's one row, which older readers read alone.
  await sql`
    create or replace function site_change() returns trigger language plpgsql as $$
    declare
      tenant text := case when tg_op = 'DELETE' then old.tenant_id else new.tenant_id end;
      moved text := coalesce(current_setting('pam.site_moved', true), '');
    begin
      if position(' ' || tenant || ' ' in moved) > 0 then return null; end if;
      insert into change_counters (scope, value) values ('site:' || tenant, 1)
      on conflict (scope) do update set value = change_counters.value + 1;
      perform pg_notify('pam_site', tenant);
      perform set_config('pam.site_moved', coalesce(nullif(moved, ''), ' ') || tenant || ' ', true);
      return null;
    end $$`.execute(db);
  await sql`
    with shards as (
      delete from change_counters where scope ~ '^site:.*#[1-9]$' returning regexp_replace(scope, '#[1-9]$', '') as base, value
    ), sums as (select base, sum(value) as value from shards group by base)
    insert into change_counters (scope, value) select base, value from sums
    on conflict (scope) do update set value = change_counters.value + excluded.value`.execute(db);
}
