import { type Kysely, sql } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * `onsite_tool_tokens` (issue 48 §5): the console's one-time pick and preview tokens for a site's
 * script, by the token's hash. Short-lived: expired ones are deleted as they are next made.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp: ts, id } = columnTypes(db);
  await db.schema
    .createTable('onsite_tool_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull())
    .addColumn('site_id', id, (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('pick', 'preview')`))
    .addColumn('experience_id', id)
    .addColumn('visit', 'text')
    .addColumn('used_by', 'text')
    .addColumn('expires_at', ts, (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('onsite_tool_tokens_expires').on('onsite_tool_tokens').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('onsite_tool_tokens').execute();
}
