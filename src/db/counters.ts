import { sql, type Kysely } from 'kysely';
import { prepared } from './prepared.js';
import type { Database } from './types.js';

/** persons: every person of the tenant; pages: its live (not deleted) pages. */
export type CounterName = 'persons' | 'pages';

/** Adds `by` to a tenant's counter, in the caller's transaction. */
export async function bump(trx: Kysely<Database>, tenantId: string, name: CounterName, by = 1): Promise<void> {
  await addToCounter(trx, { tenantId, name, by });
}

const addToCounter = prepared((db, p: { tenantId: string; name: CounterName; by: number }) =>
  db
    .insertInto('tenant_counters')
    .values({ tenant_id: p.tenantId, name: p.name, value: p.by })
    .onConflict((oc) => oc.columns(['tenant_id', 'name']).doUpdateSet({ value: sql<number>`tenant_counters.value + ${p.by}` })),
);

export async function counter(db: Kysely<Database>, tenantId: string, name: CounterName): Promise<number> {
  const row = await db
    .selectFrom('tenant_counters')
    .select('value')
    .where('tenant_id', '=', tenantId)
    .where('name', '=', name)
    .executeTakeFirst();
  return Number(row?.value ?? 0);
}
