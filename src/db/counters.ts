import { sql, type Kysely } from 'kysely';
import { isPostgres } from './adapter.js';
import { SHARD_SUFFIXES } from './changes.js';
import { prepared } from './prepared.js';
import type { Database } from './types.js';

/** persons: every person of the tenant; pages: its live (not deleted) pages. */
export type CounterName = 'persons' | 'pages';

/**
 * On PostgreSQL a counter is kept in up to eight rows, `<name>` and `<name>#1` … `#7`, one per
 * connection by its backend's pid, and read as their sum: 50 concurrent creators of one tenant's
 * persons each held the one row's lock from their upsert through their commit's flush, so they
 * committed one after another (issue 50; db/changes.ts shards the change sequence the same way).
 * SQLite has one writer and keeps the first row only. Migration 0073 folds them back on the way down.
 */
const rowNames = (name: CounterName) => [name, ...SHARD_SUFFIXES.map((suffix) => name + suffix)];
const SHARDS = SHARD_SUFFIXES.length + 1;
const ROWS: Record<CounterName, string[]> = { persons: rowNames('persons'), pages: rowNames('pages') };

/** Adds `by` to a tenant's counter, in the caller's transaction. */
export async function bump(trx: Kysely<Database>, tenantId: string, name: CounterName, by = 1): Promise<void> {
  await addToCounter(trx, { tenantId, name, by });
}

// Compiled once per dialect: on PostgreSQL the row is the connection's own shard.
const addToCounter = prepared((db, p: { tenantId: string; name: CounterName; by: number }) =>
  db
    .insertInto('tenant_counters')
    .values({
      tenant_id: p.tenantId,
      name: isPostgres(db)
        ? sql<string>`${p.name}::text || case when pg_backend_pid() % ${sql.lit(SHARDS)} = 0 then '' else '#' || (pg_backend_pid() % ${sql.lit(SHARDS)}) end`
        : p.name,
      value: p.by,
    })
    .onConflict((oc) => oc.columns(['tenant_id', 'name']).doUpdateSet({ value: sql<number>`tenant_counters.value + ${p.by}` })),
);

export async function counter(db: Kysely<Database>, tenantId: string, name: CounterName): Promise<number> {
  const row = await db
    .selectFrom('tenant_counters')
    .select((eb) => eb.fn.sum<number | string | null>('value').as('value'))
    .where('tenant_id', '=', tenantId)
    .where('name', 'in', ROWS[name])
    .executeTakeFirst();
  return Number(row?.value ?? 0);
}
