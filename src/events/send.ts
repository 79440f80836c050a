import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { literalRefusal, refusal } from './addresses.js';

export interface SendResult {
  /** The response status; undefined when no response came (refused, unreachable, timed out). */
  status?: number;
  error?: string;
  /**
   * Why no response came, without the message's details (which may name the addresses a name
   * resolved to): `REFUSED` (an address not allowed), `TIMEOUT`, `INVALID_URL`, or the system's
   * error code (ECONNREFUSED, ENOTFOUND, CERT_HAS_EXPIRED...).
   */
  code?: string;
  /** From a Retry-After header, in milliseconds. */
  retryAfterMs?: number;
}

/** Every address a name has, as `dns.lookup` with `all: true` finds them. */
export type Resolve = (hostname: string, options: dns.LookupAllOptions) => Promise<dns.LookupAddress[]>;

/** The system's resolver (hosts file, then DNS), as any client on the machine resolves. */
export const systemResolve: Resolve = (hostname, options) => dns.promises.lookup(hostname, options);

export interface SendOptions {
  /** The whole exchange, from the lookup to the end of the response. */
  timeoutMs: number;
  allowPrivate: boolean;
  resolve: Resolve;
}

class Refused extends Error {}

/**
 * The connection's own lookup: it resolves once and refuses the name if ANY of its addresses is
 * refused, then hands the connection exactly the addresses it checked. The check is thus on the
 * address actually connected to, so a name cannot answer a public address to a check and a private
 * one to the connection (DNS rebinding).
 */
function guardedLookup({ resolve, allowPrivate }: SendOptions): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }).then(
      (addresses) => {
        const refused = allowPrivate ? undefined : addresses.map((a) => refusal(a.address)).find((r) => r !== undefined);
        if (refused !== undefined) return callback(new Refused(`${hostname} resolves to ${refused} (WEBHOOK_ALLOW_PRIVATE)`), '', 0);
        const first = addresses[0];
        if (!first) return callback(new Error(`${hostname} has no address`), '', 0);
        if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, addresses);
        callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

/** One POST: no redirects followed, the whole exchange bounded by `timeoutMs`. */
export function send(url: string, body: string, headers: Record<string, string>, options: SendOptions): Promise<SendResult> {
  const { timeoutMs, allowPrivate } = options;
  return new Promise((resolve) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return resolve({ error: 'invalid URL', code: 'INVALID_URL' });
    }
    const refused = allowPrivate ? undefined : literalRefusal(target);
    if (refused !== undefined) return resolve({ error: `refused: ${refused} (WEBHOOK_ALLOW_PRIVATE)`, code: 'REFUSED' });
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
        lookup: guardedLookup(options),
        agent: false,
      },
      (response) => {
        response.on('data', () => {}); // the body is not needed, only drained
        response.on('end', () => finish({ status: response.statusCode ?? 0, ...retryAfter(response.headers['retry-after']) }));
        response.on('error', (err: NodeJS.ErrnoException) =>
          finish({ error: err.message, code: timedOut ? 'TIMEOUT' : (err.code ?? 'ERROR') }),
        );
      },
    );
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      request.destroy(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    request.on('error', (err: NodeJS.ErrnoException) => {
      const code = err instanceof Refused ? 'REFUSED' : timedOut ? 'TIMEOUT' : (err.code ?? 'ERROR');
      finish({ error: err instanceof Refused ? `refused: ${err.message}` : err.message, code });
    });
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
