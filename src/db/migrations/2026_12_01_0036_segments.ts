import type { Kysely } from 'kysely';

/**
 * Issue 39: segment audiences. `rules` is the segment's rules as JSON text (null: not a segment,
 * i.e. a person's audience, the home audience or a plain one); `priority` orders the page's
 * matching segments (higher first; null for other audiences). The visitor plane reads a page's
 * segments in one statement (src/site/serve/segments.ts), at most once per change of the tenant.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('audiences').addColumn('rules', 'text').execute();
  await db.schema.alterTable('audiences').addColumn('priority', 'integer').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('audiences').dropColumn('priority').execute();
  await db.schema.alterTable('audiences').dropColumn('rules').execute();
}
