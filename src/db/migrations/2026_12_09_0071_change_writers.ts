import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../adapter.js';

/**
 * PostgreSQL only: the change feed reads who moved a tenant's sequence instead of being notified
 * (issue 50, PostgreSQL writes that don't queue).
 *
 * Until now the trigger notified `pam_site` in the writing transaction. A transaction that has
 * called NOTIFY takes one lock of the whole cluster at commit and holds it through its commit's
 * flush, so concurrent writers committed one after another, never sharing a flush. Now each moved
 * row records its writer's transaction id (`writer`), and the change feed (db/change-feed.ts) asks
 * for the rows written at or after the oldest transaction its previous read saw still running.
 * Numbers frozen here: 0063's eight shards.
 */
const SHARDS = 8;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`alter table change_counters add column writer xid8`.execute(db);
  await sql`create index change_counters_writer on change_counters (writer) where writer is not null`.execute(db);
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
      insert into change_counters (scope, value, writer) values (counter, 1, pg_current_xact_id())
      on conflict (scope) do update set value = change_counters.value + 1, writer = excluded.writer;
      perform set_config('pam.site_moved', coalesce(nullif(moved, ''), ' ') || tenant || ' ', true);
      return null;
    end $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  // 0063's body: notified again, for a change feed that listens.
  await sql`
    create or replace function site_change() returns trigger language plpgsql as $$
    declare
      tenant text := case when tg_op = 'DELETE' then old.tenant_id else new.tenant_id end;
      moved text := coalesce(current_setting('pam.site_moved', true), '');
      shard int := pg_backend_pid() % ${sql.lit(SHARDS)};
      counter text := 'site:' || tenant || case when shard = 0 then '' else '#' || shard end;
    begin
      if position(' ' || tenant || ' ' in moved) > 0 then return null; end if;
      insert into change_counters (scope, value) values (counter, 1)
      on conflict (scope) do update set value = change_counters.value + 1;
      perform pg_notify('pam_site', tenant);
      perform set_config('pam.site_moved', coalesce(nullif(moved, ''), ' ') || tenant || ' ', true);
      return null;
    end $$`.execute(db);
  await sql`drop index change_counters_writer`.execute(db);
  await sql`alter table change_counters drop column writer`.execute(db);
}
