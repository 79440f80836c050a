import type { IncomingMessage, Server } from 'node:http';
import type { BlockList } from 'node:net';
import type { SiteUrlScheme } from '../config.js';
import { fromTrustedProxy, trustedProxies } from './proxies.js';

/** What makes a tenant page's public origin, from the configuration once (app.ts). */
export interface OriginRule {
  /** SITE_URL_SCHEME: the scheme whatever a request says. */
  scheme: SiteUrlScheme | undefined;
  /** PUBLIC_BASE_URL, whose scheme says how the service is reached. */
  publicBaseUrl: string;
  /** TRUST_PROXY: the proxies whose `X-Forwarded-Proto` is believed. */
  trustProxy: string[];
  /** The port the service listens on, read when asked: with `PORT=0` it is known only once listening. */
  port: () => number;
}

/**
 * The public origin of a tenant page: the one function every absolute address of a tenant domain
 * is made by (served documents' image and OG URLs, previews, MCP links, forms' and sessions'
 * pageUrl, image asset URLs), so each works where the service runs. `origin(hostname, request)`:
 *
 * - `https://<hostname>` when SITE_URL_SCHEME is https; or, unset, when PUBLIC_BASE_URL is https,
 *   or the request came straight from a TRUST_PROXY proxy saying `X-Forwarded-Proto: https`;
 * - otherwise `http://<hostname>:<port>`, the port the service listens on (none when 80).
 *
 * `request` is the one the address is made for (a visitor's, or the API call's); without one,
 * only the configuration speaks.
 */
export type PublicOrigin = (hostname: string, request?: Arrival) => string;

/** The public origin of a hostname for the request at hand: what an area is handed to make addresses by. */
export type OriginOf = (hostname: string) => string;

/** What a request says of how it arrived: the node request itself, or its two facts (tests, MCP). */
export type Arrival = Pick<IncomingMessage, 'headers'> & { socket: { remoteAddress?: string | undefined } };

export function publicOrigin(rule: OriginRule): PublicOrigin {
  const trusted = trustedProxies(rule.trustProxy);
  const baseIsHttps = new URL(rule.publicBaseUrl).protocol === 'https:';
  return (hostname, request) => {
    const https =
      rule.scheme !== undefined ? rule.scheme === 'https' : baseIsHttps || (request !== undefined && forwardedHttps(trusted, request));
    if (https) return `https://${hostname}`;
    const port = rule.port();
    return port === 80 ? `http://${hostname}` : `http://${hostname}:${port}`;
  };
}

/** A trusted proxy said the visitor used https (the last value of `X-Forwarded-Proto`: the one it wrote). */
function forwardedHttps(trusted: BlockList | undefined, request: Arrival): boolean {
  if (!fromTrustedProxy(trusted, request.socket.remoteAddress)) return false;
  const given = request.headers['x-forwarded-proto'];
  const proto = (Array.isArray(given) ? given.join(',') : (given ?? '')).split(',').pop()?.trim().toLowerCase();
  return proto === 'https';
}

/**
 * The port a server listens on; before it listens (injected requests), the configured one. Taken
 * when it starts listening rather than asked of the socket each time: `address()` is a system call,
 * and every served page makes absolute addresses.
 */
export function listeningPort(server: Server, configured: number): () => number {
  let port: number | undefined;
  const take = () => {
    const address = server.address();
    port = address !== null && typeof address === 'object' ? address.port : undefined;
  };
  // A server already listening has had its 'listening' event: its port is taken now.
  if (server.listening) take();
  server.on('listening', take);
  server.on('close', () => {
    port = undefined;
  });
  return () => port ?? configured;
}
