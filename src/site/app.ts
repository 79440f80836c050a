import type { IncomingMessage, ServerResponse } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyReply, LogController } from 'fastify';
import { arriving, type SiteContext, type SiteDeps } from './context.js';
import { formRoutes } from './forms/routes.js';
import type { SiteHost } from './hosts.js';
import { trustedProxies } from '../http/proxies.js';
import { dailySecrets } from '../db/daily-secrets.js';
import { collectRoutes } from './measure/collect.js';
import { notFoundPage, siteErrorPage } from './pages.js';
import { servedDocuments } from './serve/documents.js';
import { fileRoutes } from './serve/file-routes.js';
import { serveRoutes } from './serve/routes.js';
import { viewTokens } from './token.js';

/** The visitor plane as the door sees it: one way in, for a request on a tenant domain. */
export interface Site {
  /** Answers a request (its body not yet read) that came to this tenant domain. */
  enter(req: IncomingMessage, res: ServerResponse, host: SiteHost): void;
  close(): Promise<void>;
}

/** Visitor bodies are small: a report is at most 2 KB, a lead form a few hundred bytes. */
const BODY_LIMIT = 16 * 1024;

/**
 * The visitor plane: its own Fastify instance, which the door (site/door.ts) sends requests on
 * tenant domains to. HTML errors, never problem+json; no API key; its own parsers and limits.
 */
export async function buildSite(deps: SiteDeps): Promise<Site> {
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
  const context: SiteContext = {
    ...deps,
    tokens: viewTokens(deps.secret),
    trusted: trustedProxies(deps.config.trustProxy),
    secrets: dailySecrets(deps.db),
  };

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

  // The three rooms: measuring (its own parsers and errors), serving, and the lead forms, which
  // show a document again with its errors and so share the served documents.
  await site.register(collectRoutes, context);
  const documents = servedDocuments(context);
  serveRoutes(site, context, documents);
  fileRoutes(site, context);
  formRoutes(site, context, documents);
  await site.ready();
  return { enter: (req, res, host) => enter(site, req, res, host), close: () => site.close() };
}

function enter(site: FastifyInstance, req: IncomingMessage, res: ServerResponse, host: SiteHost): void {
  arriving(req, host);
  site.routing(req, res);
}
