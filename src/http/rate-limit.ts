import type { FastifyBaseLogger } from 'fastify';

/**
 * Token buckets per API key: `rate` tokens a second, up to `burst`. In memory for one instance;
 * in Redis (one atomic script, on Redis's clock) when several instances must share the buckets.
 */
export interface BucketState {
  allowed: boolean;
  /** The bucket size (RateLimit-Limit). */
  limit: number;
  /** Whole tokens left (RateLimit-Remaining). */
  remaining: number;
  /** Seconds until the bucket is full again (RateLimit-Reset). */
  resetSeconds: number;
  /** Seconds until one token is back (Retry-After), when not allowed. */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /** Takes `cost` tokens (1 by default) if the bucket holds them, else none. */
  take(keyId: string, rate: number, burst: number, cost?: number): Promise<BucketState>;
  /** Resolves once the limiter can meter requests (at once in memory). */
  ready(): Promise<void>;
  close(): Promise<void>;
}

function state(allowed: boolean, tokens: number, rate: number, burst: number, cost = 1): BucketState {
  return {
    allowed,
    limit: burst,
    remaining: Math.max(0, Math.floor(tokens)),
    resetSeconds: Math.max(0, Math.ceil((burst - tokens) / rate)),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((Math.min(cost, burst) - tokens) / rate)),
  };
}

export function memoryLimiter(): RateLimiter {
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    async take(keyId, rate, burst, cost = 1) {
      const now = performance.now() / 1000;
      const bucket = buckets.get(keyId) ?? { tokens: burst, at: now };
      bucket.tokens = Math.min(burst, bucket.tokens + (now - bucket.at) * rate);
      bucket.at = now;
      const allowed = bucket.tokens >= cost;
      if (allowed) bucket.tokens -= cost;
      buckets.set(keyId, bucket);
      return state(allowed, bucket.tokens, rate, burst, cost);
    },
    async ready() {},
    async close() {},
  };
}

// KEYS[1] the bucket; ARGV rate, burst, cost. Refill by Redis's own clock, take `cost` tokens if there are as many.
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3]) or 1
local data = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(data[1]) or burst
local at = tonumber(data[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
local allowed = 0
if tokens >= cost then
  tokens = tokens - cost
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('EXPIRE', KEYS[1], math.ceil(burst / rate) + 60)
return {allowed, tostring(tokens)}
`;

/**
 * Shared buckets; if Redis cannot answer, requests are let through (and logged) rather than refused.
 * The Redis client is loaded only here: an instance without REDIS_URL never holds it in memory.
 */
export async function redisLimiter(url: string, log: FastifyBaseLogger): Promise<RateLimiter> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false });
  redis.on('error', (err) => log.warn({ err: err.message }, 'rate limiter: redis unavailable'));
  redis.defineCommand('takeToken', { numberOfKeys: 1, lua: TAKE });
  const take = (
    redis as unknown as { takeToken(key: string, rate: number, burst: number, cost: number): Promise<[number, string]> }
  ).takeToken.bind(redis);
  return {
    async take(keyId, rate, burst, cost = 1) {
      try {
        const [allowed, tokens] = await take(`pam:rate:${keyId}`, rate, burst, cost);
        return state(allowed === 1, Number(tokens), rate, burst, cost);
      } catch {
        return state(true, burst, rate, burst);
      }
    },
    /** Waits for the connection (2 s at most), so the first requests after start-up are metered too. */
    async ready() {
      if (redis.status === 'ready') return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 2000);
        redis.once('ready', () => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
    async close() {
      redis.disconnect();
    },
  };
}
