import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isForbiddenAddress } from './addresses.js';

export interface SendResult {
  /** The response status; undefined when no response came (refused, unreachable, timed out). */
  status?: number;
  error?: string;
  /** From a Retry-After header, in milliseconds. */
  retryAfterMs?: number;
}

class Refused extends Error {}

/**
 * Resolves like the system does, but refuses any name with a forbidden address: the check is on
 * the address actually connected to, at delivery time, so DNS cannot swap it after a check.
 */
function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const bad = !allowPrivate && addresses.find((a) => isForbiddenAddress(a.address));
      if (bad) return callback(new Refused(`${hostname} resolves to ${bad.address}, a private or reserved address`), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, addresses);
      const first = addresses[0];
      if (!first) return callback(new Error(`${hostname} has no address`), '', 0);
      callback(null, first.address, first.family);
    });
  };
}

/** One POST: no redirects followed, the whole exchange bounded by `timeoutMs`. */
export function send(
  url: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
  allowPrivate: boolean,
): Promise<SendResult> {
  return new Promise((resolve) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return resolve({ error: 'invalid URL' });
    }
    const literal = target.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal) && !allowPrivate && isForbiddenAddress(literal)) {
      return resolve({ error: `refused: ${literal} is a private or reserved address` });
    }
    const transport = target.protocol === 'https:' ? https : http;
    let settled = false;
    const finish = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const request = transport.request(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        lookup: guardedLookup(allowPrivate),
        agent: false,
      },
      (response) => {
        response.on('data', () => {}); // the body is not needed, only drained
        response.on('end', () => finish({ status: response.statusCode ?? 0, ...retryAfter(response.headers['retry-after']) }));
        response.on('error', (err) => finish({ error: err.message }));
      },
    );
    const timer = setTimeout(() => {
      request.destroy(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    request.on('error', (err) => finish({ error: err instanceof Refused ? `refused: ${err.message}` : err.message }));
    request.end(body);
  });
}

/** Retry-After as seconds or as an HTTP date. */
function retryAfter(value: string | undefined): { retryAfterMs?: number } {
  if (!value) return {};
  if (/^\d+$/.test(value.trim())) return { retryAfterMs: Number(value) * 1000 };
  const at = Date.parse(value);
  return Number.isNaN(at) ? {} : { retryAfterMs: Math.max(0, at - Date.now()) };
}
