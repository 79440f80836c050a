import type { IncomingMessage } from 'node:http';
import { CACHES, newCache } from '../db/caches.js';
import net from 'node:net';
import { clientAddress } from '../http/proxies.js';

export interface Bucket {
  allowed: boolean;
  /** Whole seconds until a report is accepted again (Retry-After), when not allowed. */
  retryAfterSeconds: number;
}

export interface AddressLimiter {
  take(address: string): Bucket;
}

/** A token of `limiter` for the client a visitor request counts as (`clientAddress`). */
export function takeFor(limiter: AddressLimiter, trusted: net.BlockList | undefined, request: IncomingMessage): Bucket {
  return limiter.take(clientAddress(trusted, request.socket.remoteAddress, request.headers['x-forwarded-for']));
}

/**
 * A token bucket per client address, `perMinute` tokens, refilled evenly over the minute. In this
 * instance's memory: several instances each allow the rate, which is fine for its purpose (keeping
 * one visitor from flooding the sessions), unlike the API keys' paid-for quotas. An IPv6 client is
 * counted by its /64, which one host usually has whole.
 */
export function addressLimiter(perMinute: number): AddressLimiter {
  const rate = perMinute / 60_000;
  const buckets = newCache<{ tokens: number; at: number }>(CACHES.addressBuckets);
  return {
    take(address) {
      const key = bucketKey(address);
      const at = performance.now();
      const kept = buckets.get(key);
      const tokens = kept ? Math.min(perMinute, kept.tokens + (at - kept.at) * rate) : perMinute;
      if (tokens < 1) {
        buckets.set(key, { tokens, at });
        return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - tokens) / rate / 1000)) };
      }
      buckets.set(key, { tokens: tokens - 1, at });
      return { allowed: true, retryAfterSeconds: 0 };
    },
  };
}

function bucketKey(address: string): string {
  if (!net.isIPv6(address)) return address;
  const groups = expandIPv6(address);
  return groups ? `${groups.slice(0, 4).join(':')}::/64` : address;
}

/** The eight groups of an IPv6 address (an embedded IPv4 tail counts as the last two). */
function expandIPv6(address: string): string[] | undefined {
  const [head = '', tail] = address.split('::');
  const part = (s: string) => (s === '' ? [] : s.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g])));
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  const missing = 8 - left.length - right.length;
  if (missing < 0) return undefined;
  return [...left, ...Array<string>(missing).fill('0'), ...right].map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''));
}
