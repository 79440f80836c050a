import { randomBytes } from 'node:crypto';
import { CACHES, databaseCache } from '../db/caches.js';
import { sql, type Kysely, type Transaction } from 'kysely';
import { noteChange } from '../db/changes.js';
import type { Database, TenantDomainsTable } from '../db/types.js';
import { AppError, conflict, conflictIfTaken, invalidField } from '../http/errors.js';
import { keysetList, NEWEST_FIRST } from '../http/pagination.js';
import { newId } from '../ids.js';
import { now } from '../time.js';
import { claimedName, type HostnameRules } from './hostnames.js';
import type { TenantDomain, TenantDomainListQuery, TenantDomainRecord } from './schemas.js';
import { type RoutingTarget, withRouting } from './routing.js';

/**
 * What goes with a domain: its page links, each with its `page_link.deleted` event. The page-links
 * area's `deleteDomainLinks`, handed in by whoever wires the service (app.ts, the CLI): page links
 * live on domains, so that area imports this one, never the other way round.
 */
export type DropDomainLinks = (trx: Transaction<Database>, tenantId: string, domainId: string) => Promise<void>;

/** What goes with a domain (its links) and what its answers add (the routing record): wired by app.ts and the CLI. */
export interface DomainWiring {
  dropLinks: DropDomainLinks;
  routing: RoutingTarget;
}

/** The TXT record's name for a hostname: an underscore label, which no host name uses. */
export const verificationName = (hostname: string) => `_pam-verify.${hostname}`;

const toRecord = (row: TenantDomainsTable): TenantDomainRecord => ({
  tenantDomainId: row.id,
  hostname: row.hostname,
  isFallback: row.is_fallback === 1,
  status: row.status,
  verifiedAt: row.verified_at,
  verification:
    row.status === 'verified' || row.verification_value === null
      ? null
      : { recordType: 'TXT', name: verificationName(row.hostname), value: row.verification_value },
  createdAt: row.created_at,
});

/** A domain as the API answers and events carry it: the record, and for a custom domain its routing record. */
export const toTenantDomain = (row: TenantDomainsTable, routing: RoutingTarget): TenantDomain => withRouting(toRecord(row), routing);

/** The tenant's fallback domain `<slug>.<suffix>`: verified from the start, since the service names it. */
export async function createFallbackDomain(
  db: Kysely<Database>,
  tenantId: string,
  slug: string,
  suffix: string,
): Promise<TenantDomainRecord> {
  const at = now();
  const row: TenantDomainsTable = {
    id: newId('domain'),
    tenant_id: tenantId,
    hostname: `${slug}.${suffix}`,
    is_fallback: 1,
    created_at: at,
    status: 'verified',
    verified_at: at,
    verification_value: null,
    next_check_at: null,
  };
  await noteChange(db, 'domains');
  await db.insertInto('tenant_domains').values(row).execute();
  return toRecord(row);
}

/** Whether any row, of any tenant and status, holds this name (a new tenant's fallback name must be free). */
export async function hostnameHeld(db: Kysely<Database>, hostname: string): Promise<boolean> {
  return Boolean(await db.selectFrom('tenant_domains').select('id').where('hostname', '=', hostname).executeTakeFirst());
}

/** The first background check of a new claim; the schedule is in verification.ts. */
const FIRST_CHECK_MS = 10 * 60 * 1000;

/**
 * A claim on a custom domain, pending until its TXT record is found or an operator attests it.
 * Refused (400 at `/hostname`, saying why) by the hostname rules; 409 when a tenant already holds
 * the name verified, or this tenant already claims it. Other tenants' pending claims do not stop it.
 */
export async function createDomain(
  db: Kysely<Database>,
  tenantId: string,
  hostname: string,
  rules: HostnameRules,
  routing: RoutingTarget,
): Promise<TenantDomain> {
  const claimed = claimedName(hostname);
  if ('refusal' in claimed) throw invalidField('/hostname', claimed.refusal);
  const name = claimed.name;
  const refusal = rules.refusal(name);
  if (refusal !== undefined) throw invalidField('/hostname', refusal);
  const taken = { path: '/hostname', message: 'is already in use', detail: `The hostname ${name} is already in use` };
  const verified = await db
    .selectFrom('tenant_domains')
    .select('tenant_id')
    .where('hostname', '=', name)
    .where('status', '=', 'verified')
    .executeTakeFirst();
  if (verified) throw new AppError('conflict', taken.detail, [{ path: taken.path, message: taken.message }]);
  const at = now();
  const row: TenantDomainsTable = {
    id: newId('domain'),
    tenant_id: tenantId,
    hostname: name,
    is_fallback: 0,
    created_at: at,
    status: 'pending',
    verified_at: null,
    // 160 random bits: no one guesses the value before the tenant publishes it.
    verification_value: `pam-verify=${randomBytes(20).toString('hex')}`,
    next_check_at: new Date(Date.parse(at) + FIRST_CHECK_MS).toISOString(),
  };
  await conflictIfTaken(db.insertInto('tenant_domains').values(row).execute(), {
    ...taken,
    detail: `This tenant already has the hostname ${name}`,
  });
  return toTenantDomain(row, routing);
}

export function findDomain(db: Kysely<Database>, tenantId: string, domainId: string) {
  return db.selectFrom('tenant_domains').selectAll().where('id', '=', domainId).where('tenant_id', '=', tenantId).executeTakeFirst();
}

export function findFallbackDomain(db: Kysely<Database>, tenantId: string) {
  return db.selectFrom('tenant_domains').selectAll().where('tenant_id', '=', tenantId).where('is_fallback', '=', 1).executeTakeFirst();
}

/** Fallback domains' ids by tenant, per database: at most 10,000 tenants', least recently used out first. */
const fallbackIds = databaseCache<string>(CACHES.fallbackDomains);

/**
 * The id of a tenant's fallback domain. It is made with the tenant and never deleted (`deleteDomain`
 * refuses; a slug change renames it in place), so once read, its id is remembered: every instance
 * would read the same one. A page-link search would otherwise spend a statement on it.
 */
export async function fallbackDomainId(db: Kysely<Database>, tenantId: string): Promise<string | undefined> {
  const known = fallbackIds(db).get(tenantId);
  if (known !== undefined) return known;
  const row = await db
    .selectFrom('tenant_domains')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('is_fallback', '=', 1)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  fallbackIds(db).set(tenantId, row.id);
  return row.id;
}

const domainsList = keysetList({ name: 'tenant_domains', table: 'tenant_domains', ...NEWEST_FIRST });

export async function listDomains(db: Kysely<Database>, tenantId: string, query: TenantDomainListQuery, routing: RoutingTarget) {
  const ofTenant = db.selectFrom('tenant_domains').where('tenant_id', '=', tenantId);
  return domainsList.read({ query, rows: ofTenant.selectAll(), count: ofTenant, map: (row) => toTenantDomain(row, routing) });
}

/** The domain and its page links, in the caller's transaction. The fallback domain stays (409). */
export async function deleteDomain(trx: Transaction<Database>, dropLinks: DropDomainLinks, domain: TenantDomainsTable): Promise<void> {
  if (domain.is_fallback === 1) throw conflict("The tenant's fallback domain cannot be deleted");
  await noteChange(trx, 'domains');
  await dropLinks(trx, domain.tenant_id, domain.id);
  await trx.deleteFrom('tenant_domains').where('id', '=', domain.id).execute();
}

/** The verified domain of this (normalised) hostname, any tenant's: what a visitor's Host names. */
export function verifiedDomainNamed(db: Kysely<Database>, hostname: string) {
  return (
    db
      .selectFrom('tenant_domains')
      .select(['id', 'tenant_id', 'hostname', 'is_fallback'])
      .where('hostname', '=', hostname)
      // Literal, so the partial unique index of verified names answers it.
      .where(sql<boolean>`status = 'verified'`)
      .executeTakeFirst()
  );
}
