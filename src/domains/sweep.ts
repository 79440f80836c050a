import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import type { HostnameRules } from './hostnames.js';
import type { DomainWiring } from './repository.js';
import { releaseDomain } from './verification.js';

/**
 * At start-up: custom domains whose names the rules now refuse are released, with their links.
 * The rules depend on the configuration (the fallback suffix, PUBLIC_BASE_URL, RESERVED_HOSTNAMES),
 * so this runs on every start, not once in a migration: a name reserved later goes too. Before
 * issue 25 a tenant could claim `127.0.0.1` or another tenant's future fallback name; an upgraded
 * service releases those on its first start. Each release is logged and emitted.
 */
export async function releaseRefusedDomains(
  db: Kysely<Database>,
  wiring: DomainWiring,
  rules: HostnameRules,
  log: FastifyBaseLogger,
): Promise<number> {
  const custom = await db.selectFrom('tenant_domains').selectAll().where('is_fallback', '=', 0).execute();
  let released = 0;
  for (const row of custom) {
    const refusal = rules.refusal(row.hostname);
    if (refusal === undefined) continue;
    if (!(await db.transaction().execute((trx) => releaseDomain(trx, wiring, row, 'hostname_refused')))) continue;
    log.warn(
      { tenantDomainId: row.id, tenantId: row.tenant_id, hostname: row.hostname, refusal },
      'custom domain released: its name is refused',
    );
    released++;
  }
  return released;
}
