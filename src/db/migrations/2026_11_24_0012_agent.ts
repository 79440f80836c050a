import { sql, type Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * The page agent (src/agent/): a queued or processing version is claimed with a lease
 * (`agent_lease_until`), tried up to four times (`agent_attempts`, the next try not before
 * `agent_retry_at`), and when it fails for good is cancelled with its `failure_reason`.
 * `regeneration_key` marks the versions one keyed regenerate request queued, so a retry of it
 * (even one whose first attempt died halfway through its batches) never queues an audience twice.
 * The partial index serves the worker's claim (round-robin by tenant, oldest first) and stays as
 * small as the queue.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp: ts } = columnTypes(db);
  await db.schema.alterTable('audience_versions').addColumn('failure_reason', 'text').execute();
  await db.schema.alterTable('audience_versions').addColumn('agent_lease_until', ts).execute();
  await db.schema
    .alterTable('audience_versions')
    .addColumn('agent_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('audience_versions').addColumn('agent_retry_at', ts).execute();
  await db.schema.alterTable('audience_versions').addColumn('regeneration_key', 'text').execute();
  await sql`create index audience_versions_agent_idx on audience_versions (tenant_id, queued_at, id)
    where status in ('queued', 'processing')`.execute(db);
  await sql`create unique index audience_versions_regeneration_uq on audience_versions (regeneration_key, audience_id)
    where regeneration_key is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index audience_versions_regeneration_uq`.execute(db);
  await sql`drop index audience_versions_agent_idx`.execute(db);
  for (const column of ['regeneration_key', 'agent_retry_at', 'agent_attempts', 'agent_lease_until', 'failure_reason']) {
    await db.schema.alterTable('audience_versions').dropColumn(column).execute();
  }
}
