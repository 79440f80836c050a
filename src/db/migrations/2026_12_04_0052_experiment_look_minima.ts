import type { Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * A decision never goes back (issue 45): the always-valid p-value is the running minimum over the
 * scheduled looks (Johari et al.), so each arm's smallest p-value so far is kept, with the sign of
 * the difference at that look (which way the arm differed). `experiments.first_winner` keeps the arm
 * the first `winner` named, beside `first_winner_at`: once a look said `winner`, the results say so
 * whatever later looks show. Experiments whose first winner was recorded before keep a null arm
 * (which arm it was is not stored anywhere) and read the current look.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp: ts, id } = columnTypes(db);
  await db.schema
    .createTable('experiment_look_minima')
    .addColumn('experiment_id', id, (c) => c.notNull().references('experiments.id'))
    .addColumn('arm', 'text', (c) => c.notNull())
    .addColumn('p_value', 'double precision', (c) => c.notNull())
    .addColumn('difference', 'double precision', (c) => c.notNull())
    .addColumn('looked_at', ts, (c) => c.notNull())
    .addPrimaryKeyConstraint('experiment_look_minima_pk', ['experiment_id', 'arm'])
    .execute();
  await db.schema.alterTable('experiments').addColumn('first_winner', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('experiments').dropColumn('first_winner').execute();
  await db.schema.dropTable('experiment_look_minima').execute();
}
