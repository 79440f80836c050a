import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../adapter.js';

/**
 * The tenant's change sequence (issue 31): the `change_counters` row `site:<tenant_id>`, moved in
 * the transaction of every write a visitor or a kept API answer could see, by triggers on the
 * tables those writes touch. Triggers, so that every writer moves it (the data functions, the CLI,
 * an instance of an older release during a rolling deploy, a statement run by hand) and none can
 * forget: a served document may be remembered under the sequence on another instance.
 *
 * On PostgreSQL the trigger also notifies `pam_site` with the tenant's id (src/db/change-feed.ts).
 *
 * Which writes, and why (serve/stamp.ts names what a served document depends on):
 * - pages, audiences, page_links, tenant_domains, experiments: every insert, update and delete;
 * - audience_versions: updates and deletes (a new draft is not served; publishing one updates it);
 * - persons: updates and deletes (a page shows its audience's person; a new person is on no page);
 * - accounts: inserts and deletes, and updates of what a page shows (not `latest_activity_at`,
 *   which every account log moves);
 * - files: updates and deletes (a file is served by id; a new one is on no page yet);
 * - api_keys: updates of what authentication reads (not `last_used_at`) and deletes: a revoked
 *   key is refused at once by every instance's key cache (http/auth.ts).
 * Site settings or any other table a visitor sees joins this list in a migration of its own
 * (`siteChangeTrigger` below shows the SQL), or its data function calls noteSiteChange.
 */
const TRIGGERS: { table: string; events: string[] }[] = [
  { table: 'pages', events: ['insert', 'update', 'delete'] },
  { table: 'audiences', events: ['insert', 'update', 'delete'] },
  { table: 'page_links', events: ['insert', 'update', 'delete'] },
  { table: 'tenant_domains', events: ['insert', 'update', 'delete'] },
  { table: 'experiments', events: ['insert', 'update', 'delete'] },
  { table: 'audience_versions', events: ['update', 'delete'] },
  { table: 'persons', events: ['update', 'delete'] },
  { table: 'accounts', events: ['insert', 'update of name, name_lc, domain, domain_lc, updated_at', 'delete'] },
  { table: 'files', events: ['update', 'delete'] },
  { table: 'api_keys', events: ['update of revoked_at, expires_at, scopes, rate_limit_per_second, rate_limit_burst, key_hash', 'delete'] },
];

const nameOf = (table: string, event: string) => `${table}_site_change_${event.split(' ', 1)[0]}`;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    await sql`
      create function site_change() returns trigger language plpgsql as $$
      declare
        tenant text := case when tg_op = 'DELETE' then old.tenant_id else new.tenant_id end;
      begin
        insert into change_counters (scope, value) values ('site:' || tenant, 1)
        on conflict (scope) do update set value = change_counters.value + 1;
        -- Delivered at commit to every instance's listener (src/db/change-feed.ts); the same
        -- payload twice in one transaction is delivered once.
        perform pg_notify('pam_site', tenant);
        return null;
      end $$`.execute(db);
  }
  for (const { table, events } of TRIGGERS) for (const event of events) await siteChangeTrigger(db, table, event);
}

/**
 * One trigger: after each row `event` (`insert`, `update`, `update of a, b`, `delete`) on `table`,
 * the tenant's sequence moves. PostgreSQL calls site_change(); SQLite has the statement inline.
 */
export async function siteChangeTrigger(db: Kysely<unknown>, table: string, event: string): Promise<void> {
  const name = sql.id(nameOf(table, event));
  const on = sql.raw(`after ${event} on ${table}`);
  if (isPostgres(db)) {
    await sql`create trigger ${name} ${on} for each row execute function site_change()`.execute(db);
    return;
  }
  const row = sql.raw(event === 'delete' ? 'old' : 'new');
  await sql`
    create trigger ${name} ${on} for each row begin
      insert into change_counters (scope, value) values ('site:' || ${row}.tenant_id, 1)
      on conflict (scope) do update set value = value + 1;
    end`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const { table, events } of TRIGGERS) {
    for (const event of events) {
      await sql`drop trigger if exists ${sql.id(nameOf(table, event))}${sql.raw(isPostgres(db) ? ` on ${table}` : '')}`.execute(db);
    }
  }
  if (isPostgres(db)) await sql`drop function if exists site_change()`.execute(db);
}
