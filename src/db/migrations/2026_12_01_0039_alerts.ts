import type { Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * Sales alerts (issue 40): an alert names a Slack incoming webhook and the events that wake it.
 * `alert_windows` holds, per alert and account, the hour of the last message and how many matching
 * events came since without one, so at most one message goes per alert, account and hour and the
 * next says "and 3 more visits". `alert_messages` are the messages to send, claimed with a lease
 * and retried as webhook deliveries are. An anonymous visit's account is '' in both.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp: ts, id } = columnTypes(db);
  await db.schema
    .createTable('alerts')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('webhook_url', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    // JSON arrays of ids, or null for "any".
    .addColumn('account_ids', 'text')
    .addColumn('segment_ids', 'text')
    .addColumn('page_ids', 'text')
    .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('alerts_tenant_idx').on('alerts').columns(['tenant_id', 'created_at', 'id']).execute();

  await db.schema
    .createTable('alert_windows')
    .addColumn('alert_id', id, (c) => c.notNull().references('alerts.id').onDelete('cascade'))
    .addColumn('account_key', 'text', (c) => c.notNull())
    .addColumn('hour', 'text', (c) => c.notNull())
    .addColumn('more', 'integer', (c) => c.notNull())
    // What `more` was when the hour last turned: the count the hour's message carries.
    .addColumn('carried', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('alert_windows_pk', ['alert_id', 'account_key'])
    .execute();

  await db.schema
    .createTable('alert_messages')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('alert_id', id, (c) => c.notNull().references('alerts.id').onDelete('cascade'))
    .addColumn('event_type', 'text', (c) => c.notNull())
    // The message's facts (ids, path, channel) as JSON; names are read when it is sent.
    .addColumn('facts', 'text', (c) => c.notNull())
    .addColumn('more', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', ts)
    .addColumn('last_attempt_at', ts)
    .addColumn('last_response_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('lease_until', ts)
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('alert_messages_due_idx').on('alert_messages').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('alert_messages_alert_idx').on('alert_messages').columns(['alert_id', 'created_at', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('alert_messages').execute();
  await db.schema.dropTable('alert_windows').execute();
  await db.schema.dropTable('alerts').execute();
}
