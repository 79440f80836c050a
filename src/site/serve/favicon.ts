import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { findFile } from '../../assets/index.js';
import { findPage } from '../../pages/index.js';
import { initialIcon } from '../../render/index.js';
import { findShownImage, findSiteSettings } from '../../site-settings/index.js';
import { notModified, type SiteContext, siteHostOf } from '../context.js';
import { resolve } from './resolve.js';

/**
 * Browsers ask for it whatever a page's `<link rel="icon">` says, and an answer is shown in tabs,
 * bookmarks and history: a day in any cache is long enough for a brand change to show soon, and
 * the ETag makes every revalidation after that cheap.
 */
const FAVICON_CACHE = 'public, max-age=86400';

/**
 * `GET /favicon.ico` on a tenant domain: always 200. The brand's favicon, else its logo (their
 * files' bytes and types), else the SVG the pages carry: the brand colour with the initial of the
 * page at `/` (none without one).
 */
export async function sendFavicon(context: SiteContext, request: FastifyRequest, reply: FastifyReply) {
  const host = siteHostOf(request);
  const settings = await findSiteSettings(context.db, host.tenantId);
  reply.header('cache-control', FAVICON_CACHE).header('x-content-type-options', 'nosniff');
  for (const assetId of [settings?.favicon_asset_id, settings?.logo_asset_id]) {
    if (!assetId) continue;
    const image = await findShownImage(context.db, host.tenantId, assetId);
    const file = image && (await findFile(context.db, image.fileId));
    if (!file) continue;
    const etag = `"${file.sha256}"`;
    reply.header('etag', etag).header('content-security-policy', "default-src 'none'");
    if (notModified(request, etag)) return reply.code(304).send();
    const bytes = await context.stores.byName[file.store].get(file.id);
    if (bytes) return reply.type(file.content_type).send(bytes);
  }
  const home = await resolve(context.db, host, '/');
  const page = home?.kind === 'page' ? await findPage(context.db, host.tenantId, home.pageId) : undefined;
  // A draft's title is not shown anywhere yet, not even its first letter.
  const svg = initialIcon(settings?.brand_color, page?.status === 'published' ? page.title : '');
  const etag = `"${createHash('sha256').update(svg).digest('base64url')}"`;
  // An SVG may hold script: this one never does, and the policy says it may not either.
  reply.header('etag', etag).header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'");
  if (notModified(request, etag)) return reply.code(304).send();
  return reply.type('image/svg+xml').send(svg);
}
