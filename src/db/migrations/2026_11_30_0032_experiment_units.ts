import { sql, type Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * Sticky units (issue 36): a unit's arm is fixed at its first exposure and kept, so a change of
 * weights (a PATCH, a bandit) applies to new units only and a unit never counts in two arms. One
 * row per experiment and unit, made by the first instance that serves it (insert-if-absent, so two
 * instances assigning the same new unit at once keep the same row). `assigned_at` places the unit
 * in the period of its first exposure.
 *
 * `experiment_looks` holds the lease of the scheduled look that records `first_winner_at`, apart
 * from `experiments`, whose every update moves the tenant's change sequence (migration 0024): a
 * look claimed each minute must not drop the tenant's served-page memo.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp: ts, id } = columnTypes(db);
  await db.schema
    .createTable('experiment_units')
    .addColumn('experiment_id', id, (c) => c.notNull().references('experiments.id'))
    // `person:<id>` or a daily visitor key (`v:<hmac>`): never an address.
    .addColumn('unit', 'text', (c) => c.notNull())
    .addColumn('arm', 'text', (c) => c.notNull())
    .addColumn('assigned_at', ts, (c) => c.notNull())
    .addPrimaryKeyConstraint('experiment_units_pk', ['experiment_id', 'unit'])
    .execute();

  await db.schema
    .createTable('experiment_looks')
    .addColumn('experiment_id', id, (c) => c.primaryKey().references('experiments.id'))
    .addColumn('next_look_at', ts, (c) => c.notNull())
    .execute();
  // Experiments already running are looked at from the first round.
  await sql`insert into experiment_looks (experiment_id, next_look_at)
    select id, started_at from experiments where status = 'running' and first_winner_at is null and started_at is not null`.execute(db);
  await db.schema.createIndex('experiment_looks_due_idx').on('experiment_looks').column('next_look_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('experiment_looks').execute();
  await db.schema.dropTable('experiment_units').execute();
}
