import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { CACHES, newCache } from '../db/caches.js';
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { Kysely } from 'kysely';
import type { ChangeFeed } from '../db/change-feed.js';
import type { Freshness } from '../db/changes.js';
import { prepared } from '../db/prepared.js';
import type { Database } from '../db/types.js';
import { now } from '../time.js';
import { AppError } from './errors.js';
import type { RateLimiter } from './rate-limit.js';

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

const LAST_USED_EVERY_MS = 60_000;

/** Writes `at` as the key's last use. */
export type MarkKeyUsed = (db: Kysely<Database>, keyId: string, at: string) => Promise<unknown>;

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
  /**
   * The live key's tenant and scopes, without taking a token (401 when missing, unknown, revoked or
   * expired): for a door such as /mcp whose work is metered by the API requests it makes.
   */
  identify(key: string | undefined): Promise<{ tenantId: string; apiKeyId: string; scopes: string[] }>;
  /**
   * Takes `cost` tokens from a live key's bucket at once (a door such as /mcp charging the messages
   * of one request), with the RateLimit-* headers; 429 `rate_limited` when the bucket holds fewer.
   */
  charge(key: string, cost: number, reply: FastifyReply): Promise<void>;
  /**
   * A header that an in-process request (`app.inject`) carries when a door has already charged it
   * (/mcp charges each message, then lets a tool's first API request through): the hook then takes
   * no token. Its value is this process's secret, so a client cannot send it.
   */
  prepaid: { header: string; value: string };
}

const PREPAID_HEADER = 'x-pam-prepaid';

/**
 * Every /v0 request: the key resolves to its tenant (401 when missing, unknown, revoked or
 * expired), then takes a token from its bucket (RateLimit-* headers on every answer from here on,
 * 429 when empty), then must have the scope the method needs (403). The key itself is never logged.
 */
export function apiKeyAuth(
  db: Kysely<Database>,
  limiter: RateLimiter,
  defaults: { perSecond: number; burst: number },
  /** Stamps a key's last use: the admin area's function (it owns api_keys), handed in by app.ts. */
  markUsed: MarkKeyUsed,
  /** Told of every request a key's rate limit refuses (the metrics). */
  onRefused?: () => void,
  /** How a kept key row is known to be current: see keyRows. */
  freshness: Freshness = {},
): ApiKeyAuth {
  // Throttles the write of last_used_at: when each recent key was last written, at most 10,000 keys.
  const lastUsed = newCache<number>(CACHES.keyLastUsed);
  const touch = (keyId: string) => {
    const at = Date.now();
    if (at - (lastUsed.get(keyId) ?? 0) < LAST_USED_EVERY_MS) return;
    lastUsed.set(keyId, at);
    // Off the request's path: a failure here must never fail the request.
    void markUsed(db, keyId, new Date(at).toISOString()).catch(() => lastUsed.delete(keyId));
  };

  // Hashing costs as much as the lookup it serves; the hash of a key never changes, so the hashes
  // of recent keys are kept (the rows only as keyRows says: a revoked key must be refused at once).
  const hashes = newCache<string>(CACHES.keyHashes);
  const hashOf = (key: string) => {
    let hash = hashes.get(key);
    if (hash === undefined) {
      hash = hashApiKey(key);
      hashes.set(key, hash);
    }
    return hash;
  };

  const rowOf = keyRows(db, freshness);
  const findKey = async (key: string) => {
    const row = key.length > 512 ? undefined : await rowOf(hashOf(key));
    if (!row) return { row: undefined, refusal: 'The API key is unknown or revoked' };
    if (row.expires_at !== null && row.expires_at <= now()) return { row: undefined, refusal: 'The API key has expired' };
    return { row, refusal: '' };
  };

  type KeyRow = NonNullable<Awaited<ReturnType<typeof findKey>>['row']>;

  const prepaidValue = randomBytes(32).toString('base64url');
  const expectedPrepaid = createHash('sha256').update(prepaidValue).digest();
  const isPrepaid = (request: FastifyRequest) => {
    const given = request.headers[PREPAID_HEADER];
    if (given === undefined) return false;
    delete request.headers[PREPAID_HEADER];
    return typeof given === 'string' && timingSafeEqual(createHash('sha256').update(given).digest(), expectedPrepaid);
  };

  const meter = async (row: KeyRow, reply: FastifyReply, cost = 1) => {
    touch(row.id);
    const rate = row.rate_limit_per_second ?? defaults.perSecond;
    const bucket = await limiter.take(
      row.id,
      rate,
      row.rate_limit_burst ?? (row.rate_limit_per_second === null ? defaults.burst : rate * 2),
      cost,
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
    prepaid: { header: PREPAID_HEADER, value: prepaidValue },
    hook: async (request, reply) => {
      const key = request.headers['x-api-key'];
      if (typeof key !== 'string' || key === '') {
        throw new AppError('unauthorized', 'Send your API key in the x-api-key header');
      }
      const { row, refusal } = await findKey(key);
      if (!row) throw new AppError('unauthorized', refusal);
      request.tenantId = row.tenant_id;
      request.apiKeyId = row.id;
      if (isPrepaid(request)) touch(row.id);
      else await meter(row, reply);
      if (request.method !== 'GET' && request.method !== 'HEAD' && !row.scopes.split(',').includes('write')) {
        throw new AppError('forbidden', 'This API key may only read (GET); use a key with the write scope');
      }
    },
    identify: async (key) => {
      if (key === undefined || key === '') throw new AppError('unauthorized', 'Send your API key');
      const { row, refusal } = await findKey(key);
      if (!row) throw new AppError('unauthorized', refusal);
      return { tenantId: row.tenant_id, apiKeyId: row.id, scopes: row.scopes.split(',') };
    },
    charge: async (key, cost, reply) => {
      const { row, refusal } = await findKey(key);
      if (!row) throw new AppError('unauthorized', refusal);
      await meter(row, reply, cost);
    },
    meterUnrouted: async (request, reply) => {
      const key = request.headers['x-api-key'];
      if (typeof key !== 'string' || key === '') return;
      const { row } = await findKey(key);
      if (row) await meter(row, reply);
    },
  };
}

/** A key's row is kept at most this long, whatever else holds (issue 31). */
const KEY_KEEP_MS = 1000;

type KeyRow = Awaited<ReturnType<typeof liveKey>>[number];

interface KeptKey {
  row: KeyRow;
  /** Date.now() when it was read. */
  at: number;
  version?: number;
  mark?: ReturnType<ChangeFeed['mark']>;
}

/**
 * A live key's row by its hash, kept per instance for at most 1 s and only while nothing of its
 * tenant changed: on PostgreSQL, while the change feed (db/change-feed.ts) has received no change
 * of the tenant since the row was read, once a sync has shown every change committed before this
 * request received (a revocation through any instance moves the tenant's sequence, so it is refused
 * on every instance's next request); on SQLite, while `data_version` stands still. A sync is one
 * statement shared by every request waiting at the time: under load, authentication costs a small
 * fraction of a statement a request. When the feed is down, every request reads. Unknown and
 * revoked keys are never kept.
 */
function keyRows(db: Kysely<Database>, { dataVersion, feed }: Freshness): (keyHash: string) => Promise<KeyRow | undefined> {
  const kept = newCache<KeptKey>(CACHES.keyRows);
  const read = async (keyHash: string) => (await liveKey(db, { keyHash }))[0];
  if (feed) {
    /**
     * Reads under way by key hash, with when each started: when a kept row expires, every request
     * in flight with that key would read it. A request shares a read that started after it
     * arrived (it sees every commit before the request), never an older one.
     */
    const reading = new Map<string, { startedAt: number; row: Promise<KeyRow | undefined> }>();
    return async (keyHash) => {
      const arrived = performance.now();
      const synced = await feed.sync();
      const known = kept.get(keyHash);
      if (synced && known?.mark && Date.now() - known.at < KEY_KEEP_MS && !feed.changedSince(known.row.tenant_id, known.mark)) {
        return known.row;
      }
      const under = reading.get(keyHash);
      if (under && under.startedAt >= arrived) return under.row;
      const mark = feed.mark();
      const at = Date.now();
      const row = read(keyHash).then((found) => {
        if (synced && found) kept.set(keyHash, { row: found, at, mark });
        else kept.delete(keyHash);
        return found;
      });
      const entry = { startedAt: performance.now(), row };
      reading.set(keyHash, entry);
      const done = () => {
        if (reading.get(keyHash) === entry) reading.delete(keyHash);
      };
      row.then(done, done);
      return row;
    };
  }
  if (dataVersion) {
    return async (keyHash) => {
      const version = dataVersion();
      const known = kept.get(keyHash);
      if (known && known.version === version && Date.now() - known.at < KEY_KEEP_MS) return known.row;
      const at = Date.now();
      const row = await read(keyHash);
      if (row) kept.set(keyHash, { row, at, version });
      else kept.delete(keyHash);
      return row;
    };
  }
  return read;
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
