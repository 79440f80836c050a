import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import { findAudience } from '../audiences/repository.js';
import type { Database } from '../db/types.js';
import { findFallbackDomain } from '../domains/repository.js';
import { invalidField, notFound } from '../http/errors.js';
import { htmlResponses } from '../http/schemas.js';
import { fileSrc, render } from '../render/rendered.js';
import { loadView } from '../render/view.js';
import { findPage } from './repository.js';
import { PageParams, PagePreviewQuery } from './schemas.js';

/**
 * The document a visitor would get for the page and audience, for any page status: without the
 * measuring script or a view token (a preview is no visit), and never to be indexed. Its images
 * come from the tenant's fallback domain, where the files are served. Undefined: no such page;
 * `audience: false`: the audience is not one of the page's.
 */
export async function previewDocument(db: Kysely<Database>, tenantId: string, pageId: string, audienceId: string | undefined) {
  const page = await findPage(db, tenantId, pageId);
  if (!page) return undefined;
  const audience = audienceId === undefined ? undefined : await findAudience(db, tenantId, pageId, audienceId);
  if (audienceId !== undefined && !audience) return { audience: false as const };
  const domain = await findFallbackDomain(db, tenantId);
  const origin = domain ? `https://${domain.hostname}` : '';
  const view = await loadView(db, page, audience, {
    path: '/',
    measured: false,
    preview: true,
    fileSrc: (fileId) => `${origin}${fileSrc(fileId)}`,
    fileUrl: (fileId) => `${origin}${fileSrc(fileId)}`,
  });
  return { audience: true as const, html: render(view).parts.join('') };
}

/**
 * `GET /v0/pages/{page_id}/preview`: an API route (API key, read scope, on the API host) that
 * renders what the visitor plane would serve, through the rendering both share (src/render/), so
 * the pages area never imports the visitor plane. Registered by pageRoutes.
 */
export const previewRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/v0/pages/:page_id/preview',
    {
      schema: {
        tags: ['pages'],
        'x-extension': true,
        operationId: 'previewPage',
        summary: 'Preview a page as a visitor would get it, in any status (extension)',
        description:
          'The HTML document of the page for the audience (none without `audienceId`), without the measuring script, always `noindex`.',
        params: PageParams,
        querystring: PagePreviewQuery,
        response: htmlResponses('The document, as a visitor would get it'),
      },
    },
    async (request, reply) => {
      const preview = await previewDocument(app.db, request.tenantId, request.params.page_id, request.query.audienceId);
      if (!preview) throw notFound('Page');
      if (!preview.audience) throw invalidField('/audienceId', 'is not an audience of this page');
      return reply
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('x-robots-tag', 'noindex, nofollow')
        .header('content-security-policy', "frame-ancestors 'self'")
        .send(preview.html);
    },
  );
};
