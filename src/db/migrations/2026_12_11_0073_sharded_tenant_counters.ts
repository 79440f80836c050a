import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../adapter.js';

/**
 * PostgreSQL only: a tenant's person and page counts in up to eight rows each, `<name>` and
 * `<name>#1` … `#7`, written by each connection to its own (db/counters.ts) and read as their sum,
 * so concurrent creators of one tenant do not commit one after another on one row's lock (issue 50).
 * The rows are made as they are first written: nothing to do on the way up. On the way down every
 * shard is folded back into its first row, which older readers read alone.
 */
export async function up(_db: Kysely<unknown>): Promise<void> {}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`
    with shards as (
      delete from tenant_counters where name ~ '#[1-7]$' returning tenant_id, regexp_replace(name, '#[1-7]$', '') as base, value
    ), sums as (select tenant_id, base, sum(value) as value from shards group by tenant_id, base)
    insert into tenant_counters (tenant_id, name, value) select tenant_id, base, value from sums
    on conflict (tenant_id, name) do update set value = tenant_counters.value + excluded.value`.execute(db);
}
