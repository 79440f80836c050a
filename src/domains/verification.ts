import type { Kysely, Transaction } from 'kysely';
import { noteChange } from '../db/changes.js';
import type { Database, TenantDomainsTable } from '../db/types.js';
import { emit } from '../events/index.js';
import { AppError, conflictIfTaken, notFound } from '../http/errors.js';
import { now } from '../time.js';
import type { TxtLookup } from './dns.js';
import { type DomainWiring, toTenantDomain, verificationName } from './repository.js';
import type { TenantDomain } from './schemas.js';

/** Why a domain was removed without its tenant asking: the `reason` of `tenant_domain.released`. */
export type ReleaseReason = 'verified_by_another_tenant' | 'hostname_refused';

/**
 * Removes a domain its tenant did not ask to remove, with its page links, and tells the tenant
 * (`tenant_domain.released`, the domain as it was). In the caller's transaction; false when another
 * process released it first (then no second event).
 */
export async function releaseDomain(
  trx: Transaction<Database>,
  wiring: DomainWiring,
  row: TenantDomainsTable,
  reason: ReleaseReason,
): Promise<boolean> {
  await noteChange(trx, 'domains');
  await wiring.dropLinks(trx, row.tenant_id, row.id);
  const deleted = await trx.deleteFrom('tenant_domains').where('id', '=', row.id).executeTakeFirst();
  if (deleted.numDeletedRows === 0n) return false;
  await emit(trx, row.tenant_id, 'tenant_domain.released', toTenantDomain(row, wiring.routing), { reason });
  return true;
}

/**
 * A pending domain becomes verified, in the caller's transaction: from its commit on it is served,
 * and every other tenant's claim on the name is released. Another tenant verifying the name first
 * wins the unique rule: 409 here. Already verified: unchanged, no event.
 */
export async function markVerified(trx: Transaction<Database>, wiring: DomainWiring, domain: TenantDomainsTable): Promise<TenantDomain> {
  if (domain.status === 'verified') return toTenantDomain(domain, wiring.routing);
  await noteChange(trx, 'domains');
  const at = now();
  const verified: TenantDomainsTable = { ...domain, status: 'verified', verified_at: at, verification_value: null, next_check_at: null };
  const updated = await conflictIfTaken(
    trx
      .updateTable('tenant_domains')
      .set({ status: 'verified', verified_at: at, verification_value: null, next_check_at: null })
      .where('id', '=', domain.id)
      .where('status', '=', 'pending')
      .executeTakeFirst(),
    {
      path: '/hostname',
      message: 'is already in use',
      detail: `Another tenant verified ${domain.hostname} first; this claim is being released`,
    },
  );
  // Released meanwhile by another tenant's verification: the row is gone.
  if (updated.numUpdatedRows === 0n) throw notFound('Tenant domain');
  const others = await trx
    .selectFrom('tenant_domains')
    .selectAll()
    .where('hostname', '=', domain.hostname)
    .where('id', '<>', domain.id)
    .execute();
  for (const other of others) await releaseDomain(trx, wiring, other, 'verified_by_another_tenant');
  const resource = toTenantDomain(verified, wiring.routing);
  await emit(trx, domain.tenant_id, 'tenant_domain.verified', resource);
  return resource;
}

/**
 * A tenant asks: the TXT record is looked up, outside any transaction (it may take 5 s). Found, or
 * already verified: returns, and the caller marks it in its transaction (`markVerifiedOf`). Not
 * found: 409 `domain_not_verified`, naming the record and what the look-up saw.
 */
export async function checkRecord(db: Kysely<Database>, lookup: TxtLookup, tenantId: string, domainId: string): Promise<void> {
  const domain = await findTenantDomain(db, domainId, tenantId);
  if (domain.status === 'verified' || domain.verification_value === null) return;
  const record = verificationName(domain.hostname);
  const check = await lookup(record, domain.verification_value);
  if (check.found) return;
  throw new AppError(
    'domain_not_verified',
    `Looked up the TXT record ${record} for the value "${domain.verification_value}" and found ${check.saw}. ` +
      'Publish it at your DNS provider and try again; it is also checked in the background.',
  );
}

/** The domain, read again in the caller's transaction, marked verified (see `markVerified`). */
export async function markVerifiedOf(
  trx: Transaction<Database>,
  wiring: DomainWiring,
  tenantId: string,
  domainId: string,
): Promise<TenantDomain> {
  return markVerified(trx, wiring, await findTenantDomain(trx, domainId, tenantId));
}

/** An operator attests the domain (admin API, CLI): no look-up. */
export async function attestDomain(db: Kysely<Database>, wiring: DomainWiring, domainId: string): Promise<TenantDomain> {
  return db.transaction().execute(async (trx) => markVerified(trx, wiring, await findTenantDomain(trx, domainId)));
}

async function findTenantDomain(db: Kysely<Database>, domainId: string, tenantId?: string): Promise<TenantDomainsTable> {
  let query = db.selectFrom('tenant_domains').selectAll().where('id', '=', domainId);
  if (tenantId !== undefined) query = query.where('tenant_id', '=', tenantId);
  const row = await query.executeTakeFirst();
  if (!row) throw notFound('Tenant domain');
  return row;
}
