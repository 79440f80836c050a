import { Migrator, type MigrationResultSet } from 'kysely';
import { currentSchema } from './adapter.js';
import { forBulkWork, type DatabaseConfig } from '../config.js';
import { openDatabase, type Db } from './connection.js';
import { migrations } from './migrations/index.js';

/** Applies every pending migration; throws (and applies nothing further) if one fails. */
export async function migrateToLatest(db: Db): Promise<MigrationResultSet> {
  const migrator = new Migrator({
    db: db.kysely,
    provider: { getMigrations: async () => migrations },
    // Kysely looks for its own tables in every schema unless told which: another deployment's
    // schema in the same database must not count as ours.
    ...(db.dialect === 'postgres' ? { migrationTableSchema: await currentSchema(db.kysely) } : {}),
  });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error;
  return result;
}

/**
 * Migrates the database on connections of its own, without the service's time limit on a
 * query: a migration that fills a table from a large one (0013's rollups, 0014's counts) takes
 * longer than any request may.
 */
export async function migrateDatabase(config: DatabaseConfig): Promise<MigrationResultSet> {
  const db = openDatabase(forBulkWork(config));
  try {
    return await migrateToLatest(db);
  } finally {
    await db.close();
  }
}
