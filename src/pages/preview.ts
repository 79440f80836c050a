import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { invalidField, notFound } from '../http/errors.js';
import { htmlResponses } from '../http/schemas.js';
import { PageParams, PagePreviewQuery } from './schemas.js';

/**
 * Renders the page for the audience as a visitor would get it (src/render/preview.ts). Handed in by
 * app.ts rather than imported: the rendering reads audiences and persons, areas above this one.
 * Undefined: no such page; `audience: false`: the audience is not one of the page's.
 */
export type PreviewDocument = (
  db: Kysely<Database>,
  tenantId: string,
  pageId: string,
  audienceId: string | undefined,
) => Promise<{ audience: false } | { audience: true; html: string } | undefined>;

/**
 * `GET /v0/pages/{page_id}/preview`: an API route (API key, read scope, on the API host) that
 * renders what the visitor plane would serve, through the rendering both share (src/render/), so
 * the pages area never imports the visitor plane. Registered by pageRoutes, which is handed the rendering.
 */
export const previewRoutes: FastifyPluginAsyncTypebox<{ preview: PreviewDocument }> = async (app, { preview: previewDocument }) => {
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
