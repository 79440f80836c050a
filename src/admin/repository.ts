import { randomInt } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { allocateSlug, slugify } from '../db/slugs.js';
import { createFallbackDomain, hostnameHeld } from '../domains/index.js';
import type { ApiKeysTable, Database, TenantsTable } from '../db/types.js';
import { hashApiKey } from '../http/auth.js';
import { keysetList, NEWEST_FIRST, type ListQueryParams } from '../http/pagination.js';
import { newId } from '../ids.js';
import { now, toInstant } from '../time.js';
import { invalidField } from '../http/errors.js';
import { isScope, type ApiKey, type ApiKeyCreate, type Scope, type Tenant } from './schemas.js';

const KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `pak_` + 43 base62 characters: 256 bits of entropy, and nothing a regex or a shell would split. */
export function generateApiKey(): string {
  let key = 'pak_';
  for (let i = 0; i < 43; i++) key += KEY_ALPHABET[randomInt(KEY_ALPHABET.length)];
  return key;
}

export const toTenant = (row: TenantsTable): Tenant => ({
  tenantId: row.id,
  name: row.name,
  slug: row.slug,
  createdAt: row.created_at,
});

/**
 * A tenant and its fallback domain `<slug>.<domainSuffix>`; the slug is a DNS label, unique across
 * the service. A slug whose fallback name any domain row holds is skipped like a taken slug, so no
 * row (a claim from before names under the suffix were refused) can make creating a tenant fail.
 */
export async function createTenant(trx: Transaction<Database>, name: string, domainSuffix: string): Promise<Tenant> {
  const slug = await allocateSlug(
    trx,
    'tenant',
    slugify(name, 'tenant', 50),
    async (s) =>
      Boolean(await trx.selectFrom('tenants').select('id').where('slug', '=', s).executeTakeFirst()) ||
      (await hostnameHeld(trx, `${s}.${domainSuffix}`)),
  );
  const row = { id: newId('tenant'), name, slug, created_at: now() };
  await trx.insertInto('tenants').values(row).execute();
  await createFallbackDomain(trx, row.id, slug, domainSuffix);
  return toTenant(row);
}

export async function getTenant(db: Kysely<Database>, tenantId: string): Promise<Tenant | undefined> {
  const row = await db.selectFrom('tenants').selectAll().where('id', '=', tenantId).executeTakeFirst();
  return row && toTenant(row);
}

/** Checks what the schema cannot: a write key also reads, and an expiry lies ahead. */
export function checkKeyOptions(options: KeyOptions): KeyOptions {
  if (options.scopes && !options.scopes.includes('read')) throw invalidField('/scopes', 'must include read (a write key reads too)');
  if (options.expiresAt !== undefined) {
    const at = toInstant(options.expiresAt);
    if (at === undefined || at <= now()) throw invalidField('/expiresAt', 'must be an instant in the future');
    return { ...options, expiresAt: at };
  }
  return options;
}

export type KeyOptions = NonNullable<ApiKeyCreate>;

/**
 * Stores the key's hash only; the plain key is returned once and never again. A key given its own
 * rate and no burst gets a burst of twice its rate; with neither, the configured default applies.
 */
export async function createApiKey(trx: Kysely<Database>, tenantId: string, options: KeyOptions = {}, apiKey = generateApiKey()) {
  const apiKeyId = newId('key');
  const scopes: Scope[] = options.scopes?.includes('write') === false ? ['read'] : ['read', 'write'];
  const rate = options.rateLimitPerSecond ?? null;
  const burst = options.rateLimitBurst ?? (rate === null ? null : rate * 2);
  const expiresAt = options.expiresAt ?? null;
  await trx
    .insertInto('api_keys')
    .values({
      id: apiKeyId,
      tenant_id: tenantId,
      key_hash: hashApiKey(apiKey),
      key_prefix: apiKey.slice(0, 8),
      created_at: now(),
      revoked_at: null,
      scopes: scopes.join(','),
      expires_at: expiresAt,
      rate_limit_per_second: rate,
      rate_limit_burst: burst,
      last_used_at: null,
    })
    .execute();
  return { apiKey, apiKeyId, scopes, expiresAt, rateLimitPerSecond: rate, rateLimitBurst: burst };
}

export const toApiKey = (row: ApiKeysTable): ApiKey => ({
  apiKeyId: row.id,
  keyPrefix: row.key_prefix,
  scopes: row.scopes.split(',').filter(isScope),
  expiresAt: row.expires_at,
  rateLimitPerSecond: row.rate_limit_per_second,
  rateLimitBurst: row.rate_limit_burst,
  createdAt: row.created_at,
  revokedAt: row.revoked_at,
  lastUsedAt: row.last_used_at,
});

const apiKeysList = keysetList({ name: 'api_keys', table: 'api_keys', ...NEWEST_FIRST });

/** A tenant's keys, revoked ones included, newest first. */
export async function listApiKeys(db: Kysely<Database>, tenantId: string, query: ListQueryParams) {
  const ofTenant = db.selectFrom('api_keys').where('tenant_id', '=', tenantId);
  return apiKeysList.read({ query, within: tenantId, rows: ofTenant.selectAll(), count: ofTenant, map: toApiKey });
}

/** Revoking twice is harmless; false when no such key exists. */
export async function revokeApiKey(db: Kysely<Database>, apiKeyId: string): Promise<boolean> {
  const key = await db.selectFrom('api_keys').select(['id', 'revoked_at']).where('id', '=', apiKeyId).executeTakeFirst();
  if (!key) return false;
  if (key.revoked_at === null) {
    await db.updateTable('api_keys').set({ revoked_at: now() }).where('id', '=', apiKeyId).where('revoked_at', 'is', null).execute();
  }
  return true;
}

const tenantsList = keysetList({ name: 'tenants', table: 'tenants', ...NEWEST_FIRST });

export async function listTenants(db: Kysely<Database>, query: ListQueryParams) {
  const all = db.selectFrom('tenants');
  return tenantsList.read({ query, rows: all.selectAll(), count: all, map: toTenant });
}

/** A key's last use (http/auth.ts stamps it at most once a minute a key, off the request's path). */
export async function markKeyUsed(db: Kysely<Database>, keyId: string, at: string): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', keyId).execute();
}

/** The tenant's key of this id, revoked or not. */
export function findApiKey(db: Kysely<Database>, tenantId: string, apiKeyId: string): Promise<ApiKeysTable | undefined> {
  return db.selectFrom('api_keys').selectAll().where('id', '=', apiKeyId).where('tenant_id', '=', tenantId).executeTakeFirst();
}
