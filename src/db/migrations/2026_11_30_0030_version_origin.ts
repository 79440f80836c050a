import { sql, type Kysely } from 'kysely';

/**
 * `origin` of an audience version (issue 36): `generated` when the page agent wrote its content,
 * `written` when a person set it (API, console, MCP). A page-wide regenerate skips the audiences a
 * person wrote for, so it never again replaces hand-written copy with generic copy.
 *
 * The rows before this migration never said, so their origin is inferred, erring on the side of
 * keeping a person's words: a version with content that never went through the agent's queue
 * (`queued_at` null) had its content set by a client, unless that content is exactly what the agent
 * published in an earlier version of the audience (a draft made without content carries the latest
 * one's over). Everything else is `generated`: the agent wrote it, or it has no content of its own
 * (null: the page's), so there is nothing of a person's to keep.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('audience_versions')
    .addColumn('origin', 'text', (c) => c.notNull().defaultTo('generated'))
    .execute();
  await sql`
    update audience_versions set origin = 'written'
    where content is not null and queued_at is null
      and not exists (
        select 1 from audience_versions g
        where g.audience_id = audience_versions.audience_id
          and g.version_number < audience_versions.version_number
          and g.queued_at is not null
          and g.status in ('published', 'archived')
          and g.content = audience_versions.content
      )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('audience_versions').dropColumn('origin').execute();
}
