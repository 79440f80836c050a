import type { Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * When each view token (by its visit id) last had a lead form accepted: a repeat within the
 * window is refused by a conditional upsert in the submission's own transaction, so the rule holds
 * across instances and restarts. Rows outlive the window only until housekeeping prunes them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp, id } = columnTypes(db);
  await db.schema
    .createTable('form_claims')
    .addColumn('visit_id', id, (c) => c.primaryKey())
    .addColumn('accepted_at', timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('form_claims_accepted_idx').on('form_claims').column('accepted_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('form_claims').execute();
}
