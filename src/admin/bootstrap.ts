import type { Kysely } from 'kysely';
import { lockExclusive } from '../db/locks.js';
import type { Database } from '../db/types.js';
import { hashApiKey } from '../http/auth.js';
import { createApiKey, createTenant } from './repository.js';

/**
 * Makes a fresh install usable. With BOOTSTRAP_API_KEY: the tenant `default` exists and holds that
 * key (idempotent across restarts). Without it: on a database with no tenant at all, creates
 * `default` with a fresh key and returns that key, for the caller to show once.
 */
export async function bootstrap(
  db: Kysely<Database>,
  bootstrapKey: string | undefined,
  domainSuffix: string,
): Promise<{ apiKey: string; tenantId: string } | undefined> {
  return db.transaction().execute(async (trx) => {
    // Instances starting together must not each create a `default` tenant.
    await lockExclusive(trx, 'bootstrap');
    if (bootstrapKey !== undefined) {
      const existing = await trx
        .selectFrom('api_keys')
        .select(['id', 'revoked_at'])
        .where('key_hash', '=', hashApiKey(bootstrapKey))
        .executeTakeFirst();
      if (existing) {
        if (existing.revoked_at !== null)
          await trx.updateTable('api_keys').set({ revoked_at: null }).where('id', '=', existing.id).execute();
        return undefined;
      }
      const tenant = await trx
        .selectFrom('tenants')
        .select('id')
        .where('name', '=', 'default')
        .orderBy('created_at')
        .orderBy('id')
        .executeTakeFirst();
      const tenantId = tenant?.id ?? (await createTenant(trx, 'default', domainSuffix)).tenantId;
      await createApiKey(trx, tenantId, {}, bootstrapKey);
      return undefined;
    }
    if (await trx.selectFrom('tenants').select('id').limit(1).executeTakeFirst()) return undefined;
    const tenant = await createTenant(trx, 'default', domainSuffix);
    const { apiKey } = await createApiKey(trx, tenant.tenantId);
    return { apiKey, tenantId: tenant.tenantId };
  });
}
