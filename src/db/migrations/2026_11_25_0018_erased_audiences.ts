import type { Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * Audiences archived by a person's erasure (src/persons/erasure.ts): when, and a digest of the
 * route key they had, so that their links answer 410 Gone without keeping the key itself (a key
 * is often made of the person's name). Indexed by page and digest: only a route key that no live
 * audience holds is looked up there.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp } = columnTypes(db);
  await db.schema
    .alterTable('audiences')
    .addColumn('erased_at', timestamp, (c) => c)
    .execute();
  await db.schema
    .alterTable('audiences')
    .addColumn('erased_route_key', 'text', (c) => c)
    .execute();
  await db.schema.createIndex('audiences_erased_key_idx').on('audiences').columns(['page_id', 'erased_route_key']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('audiences_erased_key_idx').execute();
  await db.schema.alterTable('audiences').dropColumn('erased_route_key').execute();
  await db.schema.alterTable('audiences').dropColumn('erased_at').execute();
}
