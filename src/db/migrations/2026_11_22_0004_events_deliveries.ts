import { sql, type Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp: ts, id } = columnTypes(db);

  // The outbox: one row per change, written in the change's own transaction.
  await db.schema
    .createTable('events')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    // Whether the dispatcher has made this event's deliveries; a lease guards the fan-out.
    .addColumn('fanned_out', 'integer', (c) => c.notNull())
    .addColumn('fan_lease_until', ts)
    .execute();
  await db.schema.createIndex('events_list_idx').on('events').columns(['tenant_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('events_type_idx').on('events').columns(['tenant_id', 'type', 'created_at', 'id']).execute();
  await db.schema.createIndex('events_pending_idx').on('events').columns(['created_at']).where(sql<boolean>`fanned_out = 0`).execute();
  await db.schema.createIndex('events_age_idx').on('events').columns(['created_at']).execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('subscription_id', id, (c) => c.notNull().references('webhook_subscriptions.id').onDelete('cascade'))
    .addColumn('event_id', id, (c) => c.notNull().references('events.id').onDelete('cascade'))
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', ts)
    .addColumn('last_attempt_at', ts)
    .addColumn('last_response_status', 'integer')
    .addColumn('last_error', 'text')
    // A claimed attempt belongs to one dispatcher until its lease ends.
    .addColumn('lease_until', ts)
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_due_idx')
    .on('webhook_deliveries')
    .columns(['next_attempt_at'])
    .where(sql<boolean>`status = 'pending'`)
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_list_idx')
    .on('webhook_deliveries')
    .columns(['subscription_id', 'created_at', 'id'])
    .execute();
  await db.schema.createIndex('webhook_deliveries_event_idx').on('webhook_deliveries').column('event_id').execute();

  // Since when every delivery of the subscription has failed; cleared by a success.
  await db.schema.alterTable('webhook_subscriptions').addColumn('failing_since', ts).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_subscriptions').dropColumn('failing_since').execute();
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.dropTable('events').execute();
}
