import type { DailySecrets } from '../db/daily-secrets.js';
import type { IncomingMessage } from 'node:http';
import type { BlockList } from 'node:net';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { FileStores } from '../assets/index.js';
import type { Config } from '../config.js';
import type { PublicOrigin } from '../http/public-origin.js';
import type { Database } from '../db/types.js';
import type { Provider, CompanyLookup } from '../enrichment/index.js';
import type { SiteHost } from './hosts.js';
import type { MoreServedTexts } from './serve/served-files.js';
import type { ViewTokens } from './token.js';

/** What the visitor plane reads and writes through: the areas' repositories over this database. */
export interface SiteDeps {
  db: Kysely<Database>;
  /** SQLite's committed-state version, when the database has one (src/db/sqlite.ts): see serve/memo.ts. */
  dataVersion: (() => number) | undefined;
  config: Config;
  log: FastifyBaseLogger;
  /** The service secret (the one that signs download links); view tokens use a key derived from it. */
  secret: string;
  stores: FileStores;
  /** A tenant page's public origin (http/public-origin.ts). */
  origin: PublicOrigin;
  /** The metrics (src/metrics/), when they are on. */
  observe?: SiteObserver;
  /** The company behind a visitor's address (src/enrichment/), asked only for a tenant whose segments read one; no provider: always null. */
  companyLookup: CompanyLookup;
  /** The enrichment provider a lead's email domain is asked of; undefined when ENRICHMENT_URL is unset. */
  enrichment: Provider | undefined;
  /** Other planes' stored texts that name files a tenant's domains serve (serve/served-files.ts). */
  moreServedTexts: MoreServedTexts;
}

/** What the metrics learn from the visitor plane. */
export interface SiteObserver {
  /** Adds the request series' hooks to the plane's instance. */
  instrument(site: FastifyInstance): void;
  /** How a visit report ended: recorded, or why not. */
  report(outcome: 'accepted' | 'rate_limited' | 'bot' | 'invalid_report' | 'invalid_token' | 'page_gone' | 'error'): void;
  /** Hands over a reader of the plane's in-process caches, called when the metrics are scraped. */
  watchDocuments(read: () => DocumentStats): void;
}

/** The document cache (serve/cache.ts) and the outcome memo (serve/memo.ts, SQLite only), counted so far. */
export interface DocumentStats {
  cache: { entries: number; bytes: number; hits: number; misses: number };
  memo: { entries: number; hits: number; misses: number };
}

/** What every room of the plane (serve/, measure/, forms/) is given by buildSite. */
export interface SiteContext extends SiteDeps {
  tokens: ViewTokens;
  /** The `TRUST_PROXY` entries as one list (site/limits.ts); undefined when none. */
  trusted: BlockList | undefined;
  /** Today's secret for the keys of visitors without a person (db/daily-secrets.ts). */
  secrets: DailySecrets;
}

const hostOfRequest = new WeakMap<IncomingMessage, SiteHost>();

/** Marks the tenant domain a request came to, as it enters the plane (site/app.ts, from the door). */
export function arriving(req: IncomingMessage, host: SiteHost): void {
  hostOfRequest.set(req, host);
}

/** The tenant domain a site request came to: every request enters with one. */
export function siteHostOf(request: FastifyRequest): SiteHost {
  const host = hostOfRequest.get(request.raw);
  if (!host) throw new Error('A site request always enters through the door');
  return host;
}

/** `If-None-Match` against a strong ETag (weak comparison, as RFC 9110 says for GET). */
export function notModified(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
