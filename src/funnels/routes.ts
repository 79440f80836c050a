import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../http/errors.js';
import { createOnce, fromHeader, IdempotencyHeaders, sendOnce } from '../http/idempotency.js';
import { keptJson } from '../http/kept-json.js';
import { ListEnvelope, NoContent, responses } from '../http/schemas.js';
import { createFunnel, deleteFunnel, findFunnel, listFunnels, toFunnel, updateFunnel } from './repository.js';
import { funnelResults } from './results.js';
import { Funnel, FunnelCreate, FunnelListQuery, FunnelParams, FunnelResults, FunnelResultsQuery, FunnelUpdate } from './schemas.js';

const extension = { tags: ['funnels'], 'x-extension': true };

/** One plugin, listed in app.ts; the route rules (API key, query parameters, dispatcher wake-ups) are in src/http/route-rules.ts. */
export const funnelRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const sendResults = keptJson();
  app.post(
    '/v0/funnels',
    {
      schema: {
        ...extension,
        operationId: 'createFunnel',
        headers: IdempotencyHeaders,
        summary: 'Create funnel (extension)',
        description: 'Steps and how they are counted: docs/analytics.md, "Funnels".',
        body: FunnelCreate,
        response: responses({ 201: Funnel }),
      },
    },
    async (request, reply) =>
      sendOnce(reply, await createOnce(app.db, fromHeader(request), (trx) => createFunnel(trx, request.tenantId, request.body))),
  );

  app.get(
    '/v0/funnels/:funnel_id',
    {
      schema: {
        ...extension,
        operationId: 'getFunnel',
        summary: 'Get funnel (extension)',
        params: FunnelParams,
        response: responses({ 200: Funnel }),
      },
    },
    async (request) => {
      const row = await findFunnel(app.db, request.tenantId, request.params.funnel_id);
      if (!row) throw notFound('Funnel');
      return toFunnel(row);
    },
  );

  app.get(
    '/v0/funnels',
    {
      schema: {
        ...extension,
        operationId: 'listFunnels',
        summary: 'List funnels, newest first (extension)',
        querystring: FunnelListQuery,
        response: responses({ 200: ListEnvelope(Funnel) }),
      },
    },
    async (request) => listFunnels(app.db, request.tenantId, request.query),
  );

  app.patch(
    '/v0/funnels/:funnel_id',
    {
      schema: {
        ...extension,
        operationId: 'updateFunnel',
        summary: 'Update funnel (extension)',
        params: FunnelParams,
        body: FunnelUpdate,
        response: responses({ 200: Funnel }),
      },
    },
    async (request) =>
      app.db.transaction().execute(async (trx) => {
        const current = await findFunnel(trx, request.tenantId, request.params.funnel_id);
        if (!current) throw notFound('Funnel');
        return updateFunnel(trx, current, request.body);
      }),
  );

  app.delete(
    '/v0/funnels/:funnel_id',
    {
      schema: {
        ...extension,
        operationId: 'deleteFunnel',
        summary: 'Delete funnel (extension)',
        params: FunnelParams,
        response: responses({ 204: NoContent }),
      },
    },
    async (request, reply) => {
      await app.db.transaction().execute(async (trx) => {
        const current = await findFunnel(trx, request.tenantId, request.params.funnel_id);
        if (!current) throw notFound('Funnel');
        await deleteFunnel(trx, current);
      });
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/v0/funnels/:funnel_id/results',
    {
      schema: {
        ...extension,
        operationId: 'getFunnelResults',
        summary: 'Visitors reaching each step of a funnel, in order, over a range (extension)',
        description: 'Who a visitor is and how steps are ordered: docs/analytics.md, "Funnels".',
        params: FunnelParams,
        querystring: FunnelResultsQuery,
        response: responses({ 200: FunnelResults }),
      },
    },
    async (request, reply) => {
      const row = await findFunnel(app.db, request.tenantId, request.params.funnel_id);
      if (!row) throw notFound('Funnel');
      return sendResults(reply, await funnelResults(app.db, row, request.query));
    },
  );
};
