import type { Kysely } from 'kysely';

/**
 * `goals.max_value`: what one visit's value can add to a goal at most (issue 36), 1,000,000 unless
 * the goal says otherwise. Applied where results are read (src/analytics/goals.ts), so the stored
 * occurrences and `pam_collect` (migration 0028) are unchanged.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('goals')
    .addColumn('max_value', 'double precision', (c) => c.notNull().defaultTo(1_000_000))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('goals').dropColumn('max_value').execute();
}
