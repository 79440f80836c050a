import type { IncomingMessage } from 'node:http';
import net from 'node:net';
import { LRUCache } from 'lru-cache';

/**
 * Who a visitor request counts as, for its rate limit only (the address is never stored): the
 * socket's address, unless that is a trusted reverse proxy, then the right-most address of
 * `X-Forwarded-For` that is not one. Everything left of it was written by the client and could be
 * anything, so it is never believed.
 */
export function clientAddress(
  trusted: net.BlockList | undefined,
  socketAddress: string | undefined,
  forwardedFor: string | string[] | undefined,
): string {
  const socket = plain(socketAddress ?? '');
  if (!trusted || !isTrusted(trusted, socket)) return socket;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : (forwardedFor ?? ''))
    .split(',')
    .map((hop) => plain(hop.trim()))
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i] as string;
    if (!isTrusted(trusted, hop)) return hop;
  }
  // Only proxies all the way: the left-most is as close to the client as anyone says.
  return hops[0] ?? socket;
}

/** Whether the request came straight from one of the trusted proxies. */
export function fromTrustedProxy(trusted: net.BlockList | undefined, socketAddress: string | undefined): boolean {
  return trusted !== undefined && isTrusted(trusted, plain(socketAddress ?? ''));
}

/** The configured `TRUST_PROXY` entries (validated in config.ts) as one list; undefined when none. */
export function trustedProxies(entries: string[]): net.BlockList | undefined {
  if (entries.length === 0) return undefined;
  const list = new net.BlockList();
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/');
    const type = net.isIPv6(address) ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  return list;
}

function isTrusted(list: net.BlockList, address: string): boolean {
  const family = net.isIP(address);
  return family !== 0 && list.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** `::ffff:10.0.0.1` is the IPv4 address it carries; a port-suffixed `1.2.3.4:5678` is its address. */
function plain(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1] as string;
  const withPort = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(address);
  if (withPort) return withPort[1] as string;
  const bracketed = /^\[([0-9a-f:.]+)\](?::\d+)?$/i.exec(address);
  if (bracketed) return bracketed[1] as string;
  return address.slice(0, 64);
}

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

/** Enough addresses for a busy instance; past it the least recently seen one is forgotten. */
const MAX_ADDRESSES = 50_000;

/**
 * A token bucket per client address, `perMinute` tokens, refilled evenly over the minute. In this
 * instance's memory: several instances each allow the rate, which is fine for its purpose (keeping
 * one visitor from flooding the sessions), unlike the API keys' paid-for quotas. An IPv6 client is
 * counted by its /64, which one host usually has whole.
 */
export function addressLimiter(perMinute: number): AddressLimiter {
  const rate = perMinute / 60_000;
  const buckets = new LRUCache<string, { tokens: number; at: number }>({
    max: MAX_ADDRESSES,
    maxSize: 8 * 1024 * 1024,
    // An address or a /64 prefix, and its two numbers.
    sizeCalculation: (_bucket, key) => 2 * key.length + 64,
  });
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
