import type { Kysely } from 'kysely';

/**
 * Issue 38: the tenant's `defaultCountry`, the country of phone numbers typed without a country
 * code (ISO 3166-1 alpha-2, uppercased). Null, the default, refuses such numbers.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('site_settings').addColumn('default_country', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('site_settings').dropColumn('default_country').execute();
}
