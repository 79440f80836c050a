import { Migrator, type MigrationResultSet } from 'kysely';
import type { Db } from './connection.js';
import { migrations } from './migrations/index.js';

/** Applies every pending migration; throws (and applies nothing further) if one fails. */
export async function migrateToLatest(db: Db): Promise<MigrationResultSet> {
  const migrator = new Migrator({
    db: db.kysely,
    provider: { getMigrations: async () => migrations },
  });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error;
  return result;
}
