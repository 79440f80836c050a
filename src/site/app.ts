import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, LogController } from 'fastify';
import type { Kysely } from 'kysely';
import type { BlockList } from 'node:net';
import type { FileStores } from '../assets/store.js';
import type { Config } from '../config.js';
import type { Database } from '../db/types.js';
import { collectRoutes } from './collect.js';
import { trustedProxies } from './limits.js';
import { siteErrorPage, notFoundPage } from './pages.js';
import { documentRoutes } from './routes.js';
import { viewTokens, type ViewTokens } from './token.js';

/** What the visitor plane reads and writes through: the areas' repositories over this database. */
export interface SiteDeps {
  db: Kysely<Database>;
  /** SQLite's committed-state version, when the database has one (src/db/sqlite.ts): see site/memo.ts. */
  dataVersion: (() => number) | undefined;
  config: Config;
  log: FastifyBaseLogger;
  /** The service secret (the one that signs download links); view tokens use a key derived from it. */
  secret: string;
  stores: FileStores;
  /** The metrics (src/metrics/), when they are on. */
  observe?: SiteObserver;
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

/** The document cache (site/cache.ts) and the outcome memo (site/memo.ts, SQLite only), counted so far. */
export interface DocumentStats {
  cache: { entries: number; bytes: number; hits: number; misses: number };
  memo: { entries: number; hits: number; misses: number };
}

export interface SiteContext extends SiteDeps {
  tokens: ViewTokens;
  /** The `TRUST_PROXY` entries as one list (site/limits.ts); undefined when none. */
  trusted: BlockList | undefined;
}

/** Visitor bodies are small: a report is at most 2 KB, a lead form a few hundred bytes. */
const BODY_LIMIT = 16 * 1024;

/**
 * The visitor plane: its own Fastify instance, which the API app hands requests on tenant domains
 * to (site/dispatch.ts). HTML errors, never problem+json; no API key; its own parsers and limits.
 */
export async function buildSite(deps: SiteDeps): Promise<FastifyInstance> {
  // No request log: it would write every visitor's address and user agent, which the plane never keeps.
  // Failures are still logged (the error handler), without them.
  const site = Fastify({
    loggerInstance: deps.log,
    bodyLimit: BODY_LIMIT,
    return503OnClosing: false,
    logController: new LogController({ disableRequestLogging: true }),
    // The router's own errors (a path that is not valid percent-encoding): a visitor gets HTML too.
    frameworkErrors: (_err, _request, reply: FastifyReply) => {
      reply.code(400).header('x-content-type-options', 'nosniff').type('text/html; charset=utf-8').send(siteErrorPage(400));
    },
  });
  const context: SiteContext = { ...deps, tokens: viewTokens(deps.secret), trusted: trustedProxies(deps.config.trustProxy) };

  deps.observe?.instrument(site);
  site.removeAllContentTypeParsers();
  // A beacon sends text/plain (no CORS preflight); a form, urlencoded. Each handler parses its own.
  site.addContentTypeParser(
    ['text/plain', 'application/json', 'application/x-www-form-urlencoded'],
    { parseAs: 'string' },
    (_req, body, done) => done(null, body),
  );

  site.addHook('onRequest', async (_request, reply) => {
    reply.header('x-content-type-options', 'nosniff').header('referrer-policy', 'strict-origin-when-cross-origin');
  });
  site.setNotFoundHandler((_request, reply) => reply.code(404).type('text/html; charset=utf-8').send(notFoundPage()));
  site.setErrorHandler((err, request, reply) => {
    const given = (err as { statusCode?: unknown }).statusCode;
    const status = typeof given === 'number' && given >= 400 && given < 600 ? given : 500;
    if (status >= 500) request.log.error({ err }, 'visitor request failed');
    return reply.code(status).type('text/html; charset=utf-8').send(siteErrorPage(status));
  });

  await site.register(collectRoutes, context);
  await site.register(documentRoutes, context);
  await site.ready();
  return site;
}
