import type { Kysely } from 'kysely';
import { isPostgres } from '../adapter.js';
import { sql } from 'kysely';
import { siteChangeTrigger } from './2026_11_27_0024_tenant_changes.js';

/**
 * Site settings are on every served document (the brand), so their writes move the tenant's change
 * sequence like the other tables a visitor sees (migration 0024): without it, an instance on
 * PostgreSQL would keep serving a page remembered under the old sequence with the old brand.
 */
const EVENTS = ['insert', 'update', 'delete'];
const nameOf = (event: string) => `site_settings_site_change_${event}`;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const event of EVENTS) await siteChangeTrigger(db, 'site_settings', event);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const event of EVENTS) {
    await sql`drop trigger if exists ${sql.id(nameOf(event))}${sql.raw(isPostgres(db) ? ' on site_settings' : '')}`.execute(db);
  }
}
