import type { Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * Images at every width (issue 46 §5): what sharp made of each file (`renditions`, JSON), and the
 * lease of the instance making them for a file uploaded before (`renditions_lease_until`). Every
 * existing file starts with none: the backfill job makes them after start-up, never before it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp: ts } = columnTypes(db);
  await db.schema.alterTable('files').addColumn('renditions', 'text').execute();
  await db.schema.alterTable('files').addColumn('renditions_lease_until', ts).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('files').dropColumn('renditions_lease_until').execute();
  await db.schema.alterTable('files').dropColumn('renditions').execute();
}
