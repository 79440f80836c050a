import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { findFile, type FileVariant, isRenditionName, typeOfVariant, variantKey } from '../../assets/index.js';
import { isIdShaped } from '../../ids.js';
import { notModified, type SiteContext, siteHostOf } from '../context.js';
import { notFoundPage } from '../pages.js';
import { sendFavicon } from './favicon.js';
import { sendFont } from './fonts.js';
import { isServedFile } from './served-files.js';

const notFound = (reply: FastifyReply) => reply.code(404).type('text/html; charset=utf-8').send(notFoundPage());

/** What a served page loads besides itself: its favicon, its fonts and the files it shows. Registered by buildSite. */
export function fileRoutes(site: FastifyInstance, context: SiteContext): void {
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
