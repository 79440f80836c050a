import type { Kysely } from 'kysely';

/**
 * Log timelines are read newest first by (created_at, id) per owner: an index in that order serves
 * each page. It replaces the (owner_id, created_at) index, which it covers.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of ['person_logs', 'account_logs']) {
    await db.schema.createIndex(`${table}_timeline_idx`).on(table).columns(['owner_id', 'created_at', 'id']).execute();
    await db.schema.dropIndex(`${table}_owner_idx`).execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['person_logs', 'account_logs']) {
    await db.schema.createIndex(`${table}_owner_idx`).on(table).columns(['owner_id', 'created_at']).execute();
    await db.schema.dropIndex(`${table}_timeline_idx`).execute();
  }
}
