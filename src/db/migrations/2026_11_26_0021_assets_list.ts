import type { Kysely } from 'kysely';

/**
 * The assets list (GET /v0/assets, newest first, of one tenant or of one parent asset): an index
 * in each list's order, so neither reads the tenant's every asset.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('assets_list_idx').on('assets').columns(['tenant_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('assets_parent_idx').on('assets').columns(['parent_asset_id', 'created_at', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('assets_parent_idx').execute();
  await db.schema.dropIndex('assets_list_idx').execute();
}
