import type { Kysely } from 'kysely';

/**
 * `end_due_follows`: 1 when a visit's `session.ended` falls due the idle time after its last report
 * (`session_ended_at`), with `end_due_at` only a lower bound of that, the time the sweep looks again
 * (src/sessions/announce.ts). A report on SQLite then moves no index entry: issue 28's collect
 * target, where the open visits' index was rewritten on every report. 0 or null (every row so far,
 * and every row PostgreSQL's one-statement report writes): `end_due_at` is the due time itself.
 * Nullable: `pam_collect` (migration 0028) inserts whole rows of the table's type, in which a column
 * it does not know is null.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('audience_sessions')
    .addColumn('end_due_follows', 'integer', (c) => c.defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('audience_sessions').dropColumn('end_due_follows').execute();
}
