import { sql, type Kysely } from 'kysely';

/**
 * Whether any live segment of a tenant reads `company.*` (site/serve/segments.ts) is asked on every
 * miss of the served-page memo. Without an index of its own it walked every audience of the tenant
 * (100,000 at the benchmark's full scale) to test their rules: serving a segmented page slowed as
 * the tenant grew (issue 50). This partial index holds only the audiences whose live rules name a
 * company, so the question costs as many rows as there are such segments. The predicate is spelled
 * exactly as the query spells it, literals and all: both databases use a partial index only when
 * the query's condition repeats the index's.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index audiences_company_rules_idx on audiences (tenant_id)
    where archived_at is null and rules is not null and rules like '%"company.%'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index audiences_company_rules_idx`.execute(db);
}
