import type { Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * CRM integrations (issue 40): a tenant's HubSpot or Salesforce connection, and which leads each
 * one has pushed.
 * - `integrations.secrets`: the credentials as AES-256-GCM ciphertext (src/integrations/secrets.ts),
 *   never in clear.
 * - `sync_due_at` / `sync_lease_until`: the background sync claims a due row with a lease, so one
 *   instance syncs an integration at a time; `deal_cursor` is where the deals' reading resumes.
 * - `integration_leads`: a lead pushed to an integration's CRM, so that it is pushed once.
 * - `leads.gpc`: the form was posted with `Sec-GPC: 1`; such a lead never leaves the service.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp: ts, id } = columnTypes(db);
  await db.schema
    .createTable('integrations')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('secrets', 'text', (c) => c.notNull())
    .addColumn('instance_url', 'text')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addColumn('last_sync_at', ts)
    .addColumn('last_error', 'text')
    .addColumn('last_error_at', ts)
    .addColumn('deal_cursor', 'text')
    .addColumn('leads_pushed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('deals_synced', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('sync_due_at', ts, (c) => c.notNull())
    .addColumn('sync_lease_until', ts)
    .execute();
  await db.schema.createIndex('integrations_list_idx').on('integrations').columns(['tenant_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('integrations_due_idx').on('integrations').columns(['sync_due_at']).execute();

  await db.schema
    .createTable('integration_leads')
    .addColumn('integration_id', id, (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('lead_id', id, (c) => c.notNull())
    .addColumn('tenant_id', id, (c) => c.notNull())
    .addColumn('pushed_at', ts, (c) => c.notNull())
    .addPrimaryKeyConstraint('integration_leads_pk', ['integration_id', 'lead_id'])
    .execute();

  await db.schema
    .alterTable('leads')
    .addColumn('gpc', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('leads').dropColumn('gpc').execute();
  await db.schema.dropTable('integration_leads').execute();
  await db.schema.dropTable('integrations').execute();
}
