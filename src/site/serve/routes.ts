import type { FastifyInstance, FastifyReply } from 'fastify';
import { type SiteContext, siteHostOf } from '../context.js';
import { staysOnHost } from '../location.js';
import { gonePage, notFoundPage, siteErrorPage } from '../pages.js';
import { documentAt, type Documents } from './documents.js';
import { keptQuery, pathOf, searchOf, sendDocument } from './send.js';
import { visitFacts } from './visit.js';

const notFound = (reply: FastifyReply) => reply.code(404).type('text/html; charset=utf-8').send(notFoundPage());
// Never cached by anyone, never indexed: the page it replaces may have been either.
const gone = (reply: FastifyReply) =>
  reply
    .code(410)
    .header('cache-control', 'no-store')
    .header('x-robots-tag', 'noindex, nofollow')
    .type('text/html; charset=utf-8')
    .send(gonePage());

/** Every method a visitor path does not take: 405 before any body is read. */
const OTHER_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/**
 * The visitor plane's documents (issue 15, "Serving"), and the 405 of every other method on a
 * visitor path. Registered by buildSite with the site's context; the files are file-routes.ts'.
 */
export function serveRoutes(site: FastifyInstance, context: SiteContext, documents: Documents): void {
  site.addHook('onClose', async () => {
    context.log.info({ documentCache: documents.cache.stats() }, 'site document cache');
  });

  site.get('/*', async (request, reply) => {
    const host = siteHostOf(request);
    const path = pathOf(request.url);
    if (path === undefined) return notFound(reply);
    const submitted = (request.query as Record<string, unknown>).submitted === '1';
    const origin = context.origin(host.hostname, request.raw);
    const facts = visitFacts(context, request, host);
    const outcome = await documentAt(context, documents, host, path, { submitted, origin, visitorKey: facts.visitorKey, facts });
    if (!outcome) return notFound(reply);
    if (outcome.kind === 'redirect') {
      // A link's path may itself read as another host (`//evil.example`): no redirect leaves this one.
      if (!staysOnHost(outcome.location)) return notFound(reply);
      return reply.code(308).header('location', encodeURI(outcome.location)).send();
    }
    if (outcome.kind === 'gone') return gone(reply);
    return sendDocument(request, reply, context, outcome, () => keptQuery(searchOf(request.url)));
  });

  site.route({
    method: [...OTHER_METHODS],
    url: '/*',
    // Answered before any body is read: a visitor path takes no body of any type.
    onRequest: async (_request, reply) => {
      await reply.code(405).header('allow', 'GET, HEAD').type('text/html; charset=utf-8').send(siteErrorPage(405));
    },
    handler: async () => undefined,
  });
}
