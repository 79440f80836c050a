import type { Kysely } from 'kysely';
import { isHostname } from '../config.js';
import type { Database, TenantDomainsTable } from '../db/types.js';
import { conflict, conflictIfTaken, invalidField } from '../http/errors.js';
import { keysetList, NEWEST_FIRST } from '../http/pagination.js';
import { newId } from '../ids.js';
import { now } from '../time.js';
import type { TenantDomain, TenantDomainListQuery } from './schemas.js';

export const toTenantDomain = (row: TenantDomainsTable): TenantDomain => ({
  tenantDomainId: row.id,
  hostname: row.hostname,
  isFallback: row.is_fallback === 1,
  createdAt: row.created_at,
});

/** The tenant's fallback domain `<slug>.<suffix>`; tenant slugs are unique, so these never collide. */
export async function createFallbackDomain(db: Kysely<Database>, tenantId: string, slug: string, suffix: string): Promise<TenantDomain> {
  const row: TenantDomainsTable = {
    id: newId('domain'),
    tenant_id: tenantId,
    hostname: `${slug}.${suffix}`,
    is_fallback: 1,
    created_at: now(),
  };
  await db.insertInto('tenant_domains').values(row).execute();
  return toTenantDomain(row);
}

/** A hostname taken by any tenant, in any case, is 409 at `/hostname`. */
export async function createDomain(db: Kysely<Database>, tenantId: string, hostname: string): Promise<TenantDomain> {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (!isHostname(name) || !name.includes('.')) throw invalidField('/hostname', 'is not a valid DNS name (e.g. pages.example.com)');
  const row: TenantDomainsTable = { id: newId('domain'), tenant_id: tenantId, hostname: name, is_fallback: 0, created_at: now() };
  await conflictIfTaken(db.insertInto('tenant_domains').values(row).execute(), {
    path: '/hostname',
    message: 'is already in use',
    detail: `The hostname ${hostname} is already in use`,
  });
  return toTenantDomain(row);
}

export function findDomain(db: Kysely<Database>, tenantId: string, domainId: string) {
  return db.selectFrom('tenant_domains').selectAll().where('id', '=', domainId).where('tenant_id', '=', tenantId).executeTakeFirst();
}

export function findFallbackDomain(db: Kysely<Database>, tenantId: string) {
  return db.selectFrom('tenant_domains').selectAll().where('tenant_id', '=', tenantId).where('is_fallback', '=', 1).executeTakeFirst();
}

/** Tenants whose fallback domain's id this process remembers, at most (oldest forgotten first). */
const FALLBACK_IDS_KEPT = 10_000;
const fallbackIds = new Map<string, string>();

/**
 * The id of a tenant's fallback domain. It is made with the tenant and never deleted (`deleteDomain`
 * refuses; a slug change renames it in place), so once read, its id is remembered: every instance
 * would read the same one. A page-link search would otherwise spend a statement on it.
 */
export async function fallbackDomainId(db: Kysely<Database>, tenantId: string): Promise<string | undefined> {
  const known = fallbackIds.get(tenantId);
  if (known !== undefined) return known;
  const row = await db
    .selectFrom('tenant_domains')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('is_fallback', '=', 1)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  if (fallbackIds.size >= FALLBACK_IDS_KEPT) fallbackIds.delete(fallbackIds.keys().next().value ?? '');
  fallbackIds.set(tenantId, row.id);
  return row.id;
}

const domainsList = keysetList({ name: 'tenant_domains', table: 'tenant_domains', ...NEWEST_FIRST });

export async function listDomains(db: Kysely<Database>, tenantId: string, query: TenantDomainListQuery) {
  const ofTenant = db.selectFrom('tenant_domains').where('tenant_id', '=', tenantId);
  return domainsList.read({ query, rows: ofTenant.selectAll(), count: ofTenant, map: toTenantDomain });
}

/** The row only: the caller deletes the domain's links first. The fallback domain stays (409). */
export async function deleteDomain(trx: Kysely<Database>, domain: TenantDomainsTable): Promise<void> {
  if (domain.is_fallback === 1) throw conflict("The tenant's fallback domain cannot be deleted");
  await trx.deleteFrom('tenant_domains').where('id', '=', domain.id).execute();
}
