import { sql, type Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * Experiments (issue 27): a page's holdout (control against personalised) or an audience's test
 * between versions. Each stretch of fixed weights is a period (its start, a weight change, a
 * bandit's recomputation), kept so that results compare arms within periods. A visit in an
 * experiment records the experiment, its arm and its unit (the person, the account, or a daily
 * visitor key: never an address).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp: ts, id } = columnTypes(db);
  await db.schema
    .createTable('experiments')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('page_id', id, (c) => c.notNull().references('pages.id'))
    .addColumn('audience_id', id, (c) => c.references('audiences.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('allocation', 'text', (c) => c.notNull())
    .addColumn('minimum_visits_per_arm', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    // [{ key, weight, versionId }] in the client's order (the baseline first in results).
    .addColumn('arms', 'text', (c) => c.notNull())
    .addColumn('winner', 'text')
    // The first look at which results said `winner`: the anytime guarantee covers acting on it.
    .addColumn('first_winner_at', ts)
    .addColumn('next_reweigh_at', ts)
    .addColumn('started_at', ts)
    .addColumn('concluded_at', ts)
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('experiments_list_idx').on('experiments').columns(['page_id', 'created_at', 'id']).execute();
  await sql`create index experiments_running_idx on experiments (page_id) where status = 'running'`.execute(db);
  await sql`create index experiments_reweigh_idx on experiments (next_reweigh_at) where next_reweigh_at is not null`.execute(db);

  await db.schema
    .createTable('experiment_periods')
    .addColumn('experiment_id', id, (c) => c.notNull().references('experiments.id'))
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('started_at', ts, (c) => c.notNull())
    // { armKey: weight }
    .addColumn('weights', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('experiment_periods_pk', ['experiment_id', 'number'])
    .execute();

  // Today's secret for keys of visitors without an audience (a day of stickiness, then forgotten).
  await db.schema
    .createTable('daily_secrets')
    .addColumn('day', 'text', (c) => c.primaryKey())
    .addColumn('secret', 'text', (c) => c.notNull())
    .execute();

  await db.schema.alterTable('audience_sessions').addColumn('experiment_id', id).execute();
  await db.schema.alterTable('audience_sessions').addColumn('experiment_arm', 'text').execute();
  await db.schema.alterTable('audience_sessions').addColumn('experiment_unit', 'text').execute();
  await sql`create index audience_sessions_experiment_idx on audience_sessions (experiment_id, experiment_arm, session_started_at)
    where experiment_id is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index audience_sessions_experiment_idx`.execute(db);
  for (const column of ['experiment_unit', 'experiment_arm', 'experiment_id'])
    await db.schema.alterTable('audience_sessions').dropColumn(column).execute();
  await db.schema.dropTable('daily_secrets').execute();
  await db.schema.dropTable('experiment_periods').execute();
  await db.schema.dropTable('experiments').execute();
}
