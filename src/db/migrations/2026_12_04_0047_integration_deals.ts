import { type Kysely, sql } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * `integration_deals` (issue 45): each deal an integration has read from its CRM, once, so that
 * `counts.dealsSynced` counts distinct deals, not reads. The deals already read are taken to be
 * the tenant's deals of the integration's provider, and each integration's count is set from them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp: ts, id } = columnTypes(db);
  await db.schema
    .createTable('integration_deals')
    .addColumn('integration_id', id, (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('external_id', 'text', (c) => c.notNull())
    .addColumn('tenant_id', id, (c) => c.notNull())
    .addColumn('read_at', ts, (c) => c.notNull())
    .addPrimaryKeyConstraint('integration_deals_pk', ['integration_id', 'external_id'])
    .execute();
  await sql`
    INSERT INTO integration_deals (integration_id, external_id, tenant_id, read_at)
    SELECT i.id, d.external_id, i.tenant_id, d.recorded_at
    FROM integrations i JOIN deals d ON d.tenant_id = i.tenant_id AND d.source = i.provider
  `.execute(db);
  await sql`
    UPDATE integrations SET deals_synced = (SELECT count(*) FROM integration_deals x WHERE x.integration_id = integrations.id)
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('integration_deals').execute();
}
