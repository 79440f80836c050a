import type { Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/** API keys gain scopes, an optional expiry, their own rate limit, and when they were last used. */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp: ts } = columnTypes(db);
  await db.schema
    .alterTable('api_keys')
    .addColumn('scopes', 'text', (c) => c.notNull().defaultTo('read,write'))
    .execute();
  await db.schema.alterTable('api_keys').addColumn('expires_at', ts).execute();
  await db.schema.alterTable('api_keys').addColumn('rate_limit_per_second', 'integer').execute();
  await db.schema.alterTable('api_keys').addColumn('rate_limit_burst', 'integer').execute();
  await db.schema.alterTable('api_keys').addColumn('last_used_at', ts).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['last_used_at', 'rate_limit_burst', 'rate_limit_per_second', 'expires_at', 'scopes']) {
    await db.schema.alterTable('api_keys').dropColumn(column).execute();
  }
}
