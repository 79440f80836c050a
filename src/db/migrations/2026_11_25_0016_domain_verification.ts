import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../adapter.js';
import { columnTypes } from './dialect.js';

/**
 * Tenant domains are proven before they are served (issue 25). A custom domain is created
 * `pending` with a TXT value to publish; several tenants may claim one name while pending, and
 * the first to verify holds it. So the hostname is no longer unique by itself: it is unique among
 * verified domains, and per tenant among claims.
 *
 * Existing domains were being served, so they become `verified`. Names the new rules refuse
 * (IP literals, localhost, the fallback suffix, reserved names) depend on the configuration, which
 * a migration does not see: the start-up sweep (src/domains/sweep.ts) releases them.
 *
 * SQLite cannot drop a column's UNIQUE: the table is rebuilt in one transaction. Its rows are
 * copied aside, the table dropped and made again, and the rows put back. Page links refer to
 * these rows: with the check deferred, dropping counts their links as orphans, and putting each
 * row back counts them found again, so the commit sees none.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp: ts, id } = columnTypes(db);
  if (isPostgres(db)) {
    await sql`alter table tenant_domains drop constraint if exists tenant_domains_hostname_key`.execute(db);
    await db.schema
      .alterTable('tenant_domains')
      .addColumn('status', 'text', (c) => c.notNull().defaultTo('verified'))
      .execute();
    await db.schema.alterTable('tenant_domains').addColumn('verified_at', ts).execute();
    await db.schema.alterTable('tenant_domains').addColumn('verification_value', 'text').execute();
    await db.schema.alterTable('tenant_domains').addColumn('next_check_at', ts).execute();
    await sql`update tenant_domains set verified_at = created_at`.execute(db);
  } else {
    await db.transaction().execute(async (trx) => {
      await sql`pragma defer_foreign_keys = on`.execute(trx);
      await sql`create temp table tenant_domains_copy as select * from tenant_domains`.execute(trx);
      await sql`drop table tenant_domains`.execute(trx);
      await trx.schema
        .createTable('tenant_domains')
        .addColumn('id', id, (c) => c.primaryKey())
        .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
        .addColumn('hostname', 'text', (c) => c.notNull())
        .addColumn('is_fallback', 'integer', (c) => c.notNull())
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull().defaultTo('verified'))
        .addColumn('verified_at', ts)
        .addColumn('verification_value', 'text')
        .addColumn('next_check_at', ts)
        .execute();
      await sql`insert into tenant_domains (id, tenant_id, hostname, is_fallback, created_at, status, verified_at)
        select id, tenant_id, hostname, is_fallback, created_at, 'verified', created_at from tenant_domains_copy`.execute(trx);
      await sql`drop table tenant_domains_copy`.execute(trx);
      await trx.schema.createIndex('tenant_domains_list_idx').on('tenant_domains').columns(['tenant_id', 'created_at', 'id']).execute();
      await sql`create unique index tenant_domains_fallback_uq on tenant_domains (tenant_id) where is_fallback = 1`.execute(trx);
    });
  }
  // One verified holder per name (what a Host resolves to); one claim per tenant and name.
  await sql`create unique index tenant_domains_verified_uq on tenant_domains (hostname) where status = 'verified'`.execute(db);
  await sql`create unique index tenant_domains_claim_uq on tenant_domains (hostname, tenant_id)`.execute(db);
  await sql`create index tenant_domains_check_idx on tenant_domains (next_check_at) where next_check_at is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Back to one row per name: pending claims go (with their links), verified domains stay.
  await sql`delete from page_links where tenant_domain_id in (select id from tenant_domains where status <> 'verified')`.execute(db);
  await sql`delete from tenant_domains where status <> 'verified'`.execute(db);
  await sql`drop index tenant_domains_check_idx`.execute(db);
  await sql`drop index tenant_domains_claim_uq`.execute(db);
  await sql`drop index tenant_domains_verified_uq`.execute(db);
  for (const column of ['next_check_at', 'verification_value', 'verified_at', 'status'])
    await db.schema.alterTable('tenant_domains').dropColumn(column).execute();
  if (isPostgres(db)) await sql`alter table tenant_domains add constraint tenant_domains_hostname_key unique (hostname)`.execute(db);
  else await sql`create unique index tenant_domains_hostname_key on tenant_domains (hostname)`.execute(db);
}
