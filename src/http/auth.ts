import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import { prepared } from '../db/prepared.js';
import type { Database } from '../db/types.js';
import { now } from '../time.js';
import { AppError } from './errors.js';
import type { RateLimiter } from './rate-limit.js';

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

const LAST_USED_EVERY_MS = 60_000;

/** Every /v0 request runs this first; compiled once (see db/prepared.ts). */
const liveKey = prepared((db, p: { keyHash: string }) =>
  db
    .selectFrom('api_keys')
    .select(['id', 'tenant_id', 'scopes', 'expires_at', 'rate_limit_per_second', 'rate_limit_burst'])
    .where('key_hash', '=', p.keyHash)
    .where('revoked_at', 'is', null),
);

export interface ApiKeyAuth {
  /** The onRequest hook of every /v0 route. */
  hook: onRequestAsyncHookHandler;
  /**
   * For a request that matched no route (404) or used a wrong method (405): a valid key still
   * takes its token and gets its RateLimit-* headers (429 when empty); with no valid key the
   * answer stays the plain 404 or 405, since no route was there to require one.
   */
  meterUnrouted(request: FastifyRequest, reply: FastifyReply): Promise<void>;
}

/**
 * Every /v0 request: the key resolves to its tenant (401 when missing, unknown, revoked or
 * expired), then takes a token from its bucket (RateLimit-* headers on every answer from here on,
 * 429 when empty), then must have the scope the method needs (403). The key itself is never logged.
 */
export function apiKeyAuth(
  db: Kysely<Database>,
  limiter: RateLimiter,
  defaults: { perSecond: number; burst: number },
  /** Told of every request a key's rate limit refuses (the metrics). */
  onRefused?: () => void,
): ApiKeyAuth {
  // Throttles the write of last_used_at: when each recent key was last written, at most 10,000 keys.
  const lastUsed = new LRUCache<string, number>({
    max: 10_000,
    maxSize: 2 * 1024 * 1024,
    sizeCalculation: (_at, keyId) => 2 * keyId.length + 64,
  });
  const touch = (keyId: string) => {
    const at = Date.now();
    if (at - (lastUsed.get(keyId) ?? 0) < LAST_USED_EVERY_MS) return;
    lastUsed.set(keyId, at);
    // Off the request's path: a failure here must never fail the request.
    void db
      .updateTable('api_keys')
      .set({ last_used_at: new Date(at).toISOString() })
      .where('id', '=', keyId)
      .execute()
      .catch(() => lastUsed.delete(keyId));
  };

  // Hashing costs as much as the lookup it serves; the hash of a key never changes, so the hashes
  // of recent keys are kept (the lookup itself is not: a revoked key must be refused at once).
  const hashes = new LRUCache<string, string>({
    max: 10_000,
    // Keys longer than 512 characters are refused before hashing.
    maxSize: 16 * 1024 * 1024,
    sizeCalculation: (hash, key) => 2 * (key.length + hash.length) + 64,
  });
  const hashOf = (key: string) => {
    let hash = hashes.get(key);
    if (hash === undefined) {
      hash = hashApiKey(key);
      hashes.set(key, hash);
    }
    return hash;
  };

  const findKey = async (key: string) => {
    const row = key.length > 512 ? undefined : (await liveKey(db, { keyHash: hashOf(key) }))[0];
    if (!row) return { row: undefined, refusal: 'The API key is unknown or revoked' };
    if (row.expires_at !== null && row.expires_at <= now()) return { row: undefined, refusal: 'The API key has expired' };
    return { row, refusal: '' };
  };

  type KeyRow = NonNullable<Awaited<ReturnType<typeof findKey>>['row']>;
  const meter = async (row: KeyRow, reply: FastifyReply) => {
    touch(row.id);
    const rate = row.rate_limit_per_second ?? defaults.perSecond;
    const bucket = await limiter.take(
      row.id,
      rate,
      row.rate_limit_burst ?? (row.rate_limit_per_second === null ? defaults.burst : rate * 2),
    );
    reply
      .header('ratelimit-limit', bucket.limit)
      .header('ratelimit-remaining', bucket.remaining)
      .header('ratelimit-reset', bucket.resetSeconds);
    if (!bucket.allowed) {
      onRefused?.();
      throw new AppError('rate_limited', `Rate limit exceeded; retry in ${bucket.retryAfterSeconds} s`, undefined, {
        'retry-after': String(bucket.retryAfterSeconds),
      });
    }
  };

  return {
    hook: async (request, reply) => {
      const key = request.headers['x-api-key'];
      if (typeof key !== 'string' || key === '') {
        throw new AppError('unauthorized', 'Send your API key in the x-api-key header');
      }
      const { row, refusal } = await findKey(key);
      if (!row) throw new AppError('unauthorized', refusal);
      request.tenantId = row.tenant_id;
      request.apiKeyId = row.id;
      await meter(row, reply);
      if (request.method !== 'GET' && request.method !== 'HEAD' && !row.scopes.split(',').includes('write')) {
        throw new AppError('forbidden', 'This API key may only read (GET); use a key with the write scope');
      }
    },
    meterUnrouted: async (request, reply) => {
      const key = request.headers['x-api-key'];
      if (typeof key !== 'string' || key === '') return;
      const { row } = await findKey(key);
      if (row) await meter(row, reply);
    },
  };
}

/** `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time (hashing first evens out the lengths). */
export function adminAuth(adminToken: string): onRequestAsyncHookHandler {
  const expected = createHash('sha256').update(adminToken).digest();
  return async (request: FastifyRequest) => {
    const header = request.headers.authorization ?? '';
    const match = /^Bearer (.+)$/i.exec(header);
    const given = createHash('sha256')
      .update(match?.[1] ?? '')
      .digest();
    if (!match || !timingSafeEqual(given, expected)) {
      throw new AppError('unauthorized', 'Send the admin token as Authorization: Bearer <ADMIN_TOKEN>', undefined, {
        'www-authenticate': 'Bearer realm="admin"',
      });
    }
  };
}
