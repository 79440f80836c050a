import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../http/errors.js';
import { ListEnvelope, NoContent, responses } from '../http/schemas.js';
import { createOnce, fromHeader, IdempotencyHeaders, sendOnce } from '../http/idempotency.js';
import { createPageLink, deletePageLink, searchPageLinks, updatePageLink } from './repository.js';
import { PageLink, PageLinkCreate, PageLinkParams, PageLinkSearchQuery, PageLinkUpdate } from './schemas.js';

const tags = ['page links'];
const extension = { tags, 'x-extension': true };

/** One plugin, listed in app.ts; the route rules (API key, query parameters, dispatcher wake-ups) are in src/http/route-rules.ts. */
export const pageLinkRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/v0/page_links/search',
    {
      schema: {
        tags,
        operationId: 'searchPageLinks',
        summary: 'Search page links',
        querystring: PageLinkSearchQuery,
        response: responses({ 200: ListEnvelope(PageLink) }),
      },
    },
    async (request) => searchPageLinks(app.db, request.tenantId, request.query),
  );

  app.post(
    '/v0/page_links',
    {
      schema: {
        ...extension,
        operationId: 'createPageLink',
        headers: IdempotencyHeaders,
        summary: 'Create page link (extension)',
        body: PageLinkCreate,
        response: responses({ 201: PageLink }),
      },
    },
    async (request, reply) =>
      sendOnce(reply, await createOnce(app.db, fromHeader(request), (trx) => createPageLink(trx, request.tenantId, request.body))),
  );

  app.patch(
    '/v0/page_links/:page_link_id',
    {
      schema: {
        ...extension,
        operationId: 'updatePageLink',
        summary: 'Move a page link to another path or target (extension)',
        params: PageLinkParams,
        body: PageLinkUpdate,
        response: responses({ 200: PageLink }),
      },
    },
    async (request) => {
      const link = await app.db
        .transaction()
        .execute((trx) => updatePageLink(trx, request.tenantId, request.params.page_link_id, request.body));
      if (!link) throw notFound('Page link');
      return link;
    },
  );

  app.delete(
    '/v0/page_links/:page_link_id',
    {
      schema: {
        ...extension,
        operationId: 'deletePageLink',
        summary: 'Delete page link (extension)',
        params: PageLinkParams,
        response: responses({ 204: NoContent }),
      },
    },
    async (request, reply) => {
      const deleted = await app.db.transaction().execute((trx) => deletePageLink(trx, request.tenantId, request.params.page_link_id));
      if (!deleted) throw notFound('Page link');
      return reply.code(204).send(null);
    },
  );
};
