import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createOnce, fromHeader, IdempotencyHeaders, sendOnce } from '../http/idempotency.js';
import { notFound } from '../http/errors.js';
import { ListEnvelope, NoContent, responses } from '../http/schemas.js';
import type { TemplateStarts } from './from-template.js';
import type { PreviewLinks } from './preview-links.js';
import { type Previews, previewRoutes } from './preview.js';
import { createPage, deletePage, getPage, listPages, type PageCopies, updatePage } from './repository.js';
import { Page, PageCreate, PageListQuery, PageParams, PageSummary, PageUpdate } from './schemas.js';
import type { PublicOrigin } from '../http/public-origin.js';

const tags = ['pages'];
const extension = { tags, 'x-extension': true };

/**
 * One plugin, listed in app.ts, which hands it the previews' rendering and links, the audiences' page copies and the templates' starts; the route rules (API key,
 * query parameters, dispatcher wake-ups) are in src/http/route-rules.ts.
 */
export const pageRoutes: FastifyPluginAsyncTypebox<{
  previews: Previews;
  links: PreviewLinks;
  origin: PublicOrigin;
  copies: PageCopies;
  templates: TemplateStarts;
}> = async (app, { previews, links, origin, copies, templates }) => {
  app.get(
    '/v0/pages',
    {
      schema: {
        tags,
        operationId: 'listPages',
        summary: 'List pages',
        description:
          'Each item is a page without its `content` (a PageSummary), unless `include=content` asks for it; `limit` is then at most 10.',
        querystring: PageListQuery,
        response: responses({ 200: ListEnvelope(PageSummary) }),
      },
    },
    async (request) => listPages(app.db, request.tenantId, request.query),
  );

  app.post(
    '/v0/pages',
    {
      schema: {
        headers: IdempotencyHeaders,
        ...extension,
        operationId: 'createPage',
        summary: 'Create page (extension)',
        body: PageCreate,
        response: responses({ 201: Page }),
      },
    },
    async (request, reply) => {
      return sendOnce(
        reply,
        await createOnce(app.db, fromHeader(request), (trx) =>
          createPage(trx, request.tenantId, request.body, (hostname) => origin(hostname, request.raw), templates),
        ),
      );
    },
  );

  app.get(
    '/v0/pages/:page_id',
    {
      schema: {
        ...extension,
        operationId: 'getPage',
        summary: 'Get page (extension)',
        params: PageParams,
        response: responses({ 200: Page }),
      },
    },
    async (request) => {
      const page = await getPage(app.db, request.tenantId, request.params.page_id);
      if (!page) throw notFound('Page');
      return page;
    },
  );

  app.patch(
    '/v0/pages/:page_id',
    {
      schema: {
        tags,
        operationId: 'updatePage',
        summary: 'Update page',
        params: PageParams,
        body: PageUpdate,
        response: responses({ 200: Page }),
      },
    },
    async (request) => {
      const page = await updatePage(app.db, request.tenantId, request.params.page_id, request.body, (hostname) =>
        origin(hostname, request.raw),
      );
      if (!page) throw notFound('Page');
      return page;
    },
  );

  app.delete(
    '/v0/pages/:page_id',
    {
      schema: {
        ...extension,
        operationId: 'deletePage',
        summary: 'Delete page (extension)',
        params: PageParams,
        response: responses({ 204: NoContent }),
      },
    },
    async (request, reply) => {
      const deleted = await app.db.transaction().execute((trx) => deletePage(trx, request.tenantId, request.params.page_id, copies));
      if (!deleted) throw notFound('Page');
      return reply.code(204).send(null);
    },
  );

  await app.register(previewRoutes, { previews, links, origin });
};
