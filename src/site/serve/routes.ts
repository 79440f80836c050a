import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { findFile, type FileVariant, typeOfVariant, variantKey, isRenditionName } from '../../assets/index.js';
import { isIdShaped } from '../../ids.js';
import { notModified, type SiteContext, siteHostOf, visitorKeyOf } from '../context.js';
import { staysOnHost } from '../location.js';
import { gonePage, notFoundPage, siteErrorPage } from '../pages.js';
import { documentAt, type Documents } from './documents.js';
import { keptQuery, pathOf, searchOf, sendDocument } from './send.js';
import { isServedFile } from './served-files.js';
import { sendFavicon } from './favicon.js';
import { sendFont } from './fonts.js';
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
 * The visitor plane's documents and files (issue 15, "Serving"), and the 405 of every other
 * method on a visitor path. Registered by buildSite with the site's context.
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
    const visitor = () => visitorKeyOf(context, request, host.hostname);
    const origin = context.origin(host.hostname, request.raw);
    const facts = visitFacts(context, request, host);
    const outcome = await documentAt(context, documents, host, path, { submitted, origin, visitorKey: visitor, facts });
    if (!outcome) return notFound(reply);
    if (outcome.kind === 'redirect') {
      // A link's path may itself read as another host (`//evil.example`): no redirect leaves this one.
      if (!staysOnHost(outcome.location)) return notFound(reply);
      return reply.code(308).header('location', encodeURI(outcome.location)).send();
    }
    if (outcome.kind === 'gone') return gone(reply);
    return sendDocument(request, reply, context, outcome, keptQuery(searchOf(request.url)));
  });

  site.get('/favicon.ico', (request, reply) => sendFavicon(context, request, reply));
  site.get<{ Params: { name: string } }>('/_pam/fonts/:name', sendFont);

  for (const variant of ['original', 'preview'] as const) {
    site.get<{ Params: { fileId: string } }>(
      variant === 'original' ? '/_pam/files/:fileId' : '/_pam/files/:fileId/preview',
      (request, reply) => sendFile(context, request, reply, variant),
    );
  }
  // The image at another width, or in WebP (issue 46): a name the route knows, of a file that has it.
  site.get<{ Params: { fileId: string; rendition: string } }>('/_pam/files/:fileId/:rendition', (request, reply) => {
    const { rendition } = request.params;
    return isRenditionName(rendition) ? sendFile(context, request, reply, rendition) : notFound(reply);
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

/**
 * A file a live page of this domain's tenant shows (served-files.ts), immutable under its id:
 * cached for a year, revalidated by its hash. Any other file of the tenant is reached through the
 * API's signed links only.
 */
async function sendFile(
  context: SiteContext,
  request: FastifyRequest<{ Params: { fileId: string } }>,
  reply: FastifyReply,
  variant: FileVariant,
) {
  const host = siteHostOf(request);
  const { fileId } = request.params;
  const file = isIdShaped(fileId) ? await findFile(context.db, fileId) : undefined;
  const contentType = file && typeOfVariant(file, variant);
  if (!file || file.tenant_id !== host.tenantId || !contentType) return notFound(reply);
  if (!(await isServedFile(context.db, context.moreServedTexts, host.tenantId, file.id))) return notFound(reply);
  const etag = `"${file.sha256}${variant === 'original' ? '' : `-${variant}`}"`;
  reply
    .header('cache-control', 'public, max-age=31536000, immutable')
    .header('etag', etag)
    .header('content-security-policy', "default-src 'none'");
  if (notModified(request, etag)) return reply.code(304).send();
  const bytes = await context.stores.byName[file.store].get(variantKey(file.id, variant));
  if (!bytes) return notFound(reply);
  return reply.type(contentType).send(bytes);
}
