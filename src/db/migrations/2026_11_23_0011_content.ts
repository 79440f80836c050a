import type { Kysely } from 'kysely';

/**
 * What a page shows (headline, subheadline, Markdown sections) as JSON text: a page's own
 * (null: the default made from its title, so it follows the title), and an audience version's
 * (null: the page's).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('pages').addColumn('content', 'text').execute();
  await db.schema.alterTable('audience_versions').addColumn('content', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('audience_versions').dropColumn('content').execute();
  await db.schema.alterTable('pages').dropColumn('content').execute();
}
