import { sql, type Kysely } from 'kysely';
import { columnTypes, createSubstringIndex } from './dialect.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp: ts, id } = columnTypes(db);

  await db.schema
    .createTable('tenants')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('tenants_created_idx').on('tenants').columns(['created_at', 'id']).execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('key_prefix', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('revoked_at', ts)
    .execute();
  await db.schema.createIndex('api_keys_tenant_idx').on('api_keys').column('tenant_id').execute();

  await db.schema
    .createTable('slug_counters')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('base', 'text', (c) => c.notNull())
    .addColumn('last_n', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('slug_counters_pk', ['scope', 'base'])
    .execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('response_status', 'integer', (c) => c.notNull())
    .addColumn('response_body', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('expires_at', ts)
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['tenant_id', 'scope', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_expiry_idx').on('idempotency_keys').column('expires_at').execute();

  await db.schema
    .createTable('persons')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('domain', 'text')
    .addColumn('domain_lc', 'text')
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('phone_number', 'text')
    .addColumn('linkedin_profile_url', 'text')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addUniqueConstraint('persons_slug_uq', ['tenant_id', 'slug'])
    .execute();
  await db.schema.createIndex('persons_list_idx').on('persons').columns(['tenant_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('persons_domain_idx').on('persons').columns(['tenant_id', 'domain_lc']).execute();

  await db.schema
    .createTable('accounts')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_lc', 'text', (c) => c.notNull())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('domain_lc', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addColumn('latest_activity_at', ts, (c) => c.notNull())
    .addUniqueConstraint('accounts_domain_uq', ['tenant_id', 'domain_lc'])
    .execute();
  await db.schema.createIndex('accounts_list_idx').on('accounts').columns(['tenant_id', 'created_at', 'id']).execute();
  await createSubstringIndex(db, 'accounts', ['name_lc', 'domain_lc']);

  for (const [table, owner] of [
    ['person_logs', 'persons'],
    ['account_logs', 'accounts'],
  ] as const) {
    await db.schema
      .createTable(table)
      .addColumn('id', id, (c) => c.primaryKey())
      .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
      .addColumn('owner_id', id, (c) => c.notNull().references(`${owner}.id`))
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('idempotency_key', 'text')
      .addColumn('created_at', ts, (c) => c.notNull())
      .addColumn('updated_at', ts)
      .addColumn('deleted_at', ts)
      .execute();
    await db.schema.createIndex(`${table}_owner_idx`).on(table).columns(['owner_id', 'created_at']).execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists accounts_fts`.execute(db);
  for (const table of ['account_logs', 'person_logs', 'accounts', 'persons', 'idempotency_keys', 'slug_counters', 'api_keys', 'tenants']) {
    await db.schema.dropTable(table).execute();
  }
}
