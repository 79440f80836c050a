import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../http/errors.js';
import { createOnce, fromHeader, IdempotencyHeaders, sendOnce } from '../http/idempotency.js';
import { keptJson } from '../http/kept-json.js';
import { ListEnvelope, NoContent, responses } from '../http/schemas.js';
import { Pipeline, PipelineQuery } from './pipeline-schemas.js';
import { pipelineReport } from './pipeline.js';
import { deleteDeal, findDeal, listDeals, toDeal, upsertDeal } from './repository.js';
import { Deal, DealInput, DealListQuery, DealParams } from './schemas.js';

const extension = { tags: ['deals'], 'x-extension': true };

/** One plugin, listed in app.ts; the route rules (API key, query parameters, dispatcher wake-ups) are in src/http/route-rules.ts. */
export const dealRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const sendPipeline = keptJson();
  app.post(
    '/v0/deals',
    {
      schema: {
        headers: IdempotencyHeaders,
        ...extension,
        operationId: 'upsertDeal',
        summary: 'Create or update deal by source and external id (extension)',
        description:
          '201 when new, 200 when a deal of this source and externalId existed (its fields are replaced). `accountDomain` is matched to the tenant\'s account with that domain, case-insensitively; `matched` says whether one was. docs/analytics.md, "Influenced pipeline".',
        body: DealInput,
        response: responses({ 200: Deal, 201: Deal }),
      },
    },
    async (request, reply) => {
      // A replay repeats the first answer's status too: 201 when that request made the deal.
      const once = { ...fromHeader(request), statusOf: (body: unknown) => ((body as { created: boolean }).created ? 201 : 200) };
      const result = await createOnce(app.db, once, (trx) => upsertDeal(trx, request.tenantId, request.body, { fromApi: true }));
      return sendOnce(reply, { ...result, body: result.body.deal });
    },
  );

  app.get(
    '/v0/deals',
    {
      schema: {
        ...extension,
        operationId: 'listDeals',
        summary: "List deals, newest first by the deal's createdAt (extension)",
        querystring: DealListQuery,
        response: responses({ 200: ListEnvelope(Deal) }),
      },
    },
    async (request) => listDeals(app.db, request.tenantId, request.query),
  );

  app.get(
    '/v0/deals/:deal_id',
    {
      schema: {
        ...extension,
        operationId: 'getDeal',
        summary: 'Get deal (extension)',
        params: DealParams,
        response: responses({ 200: Deal }),
      },
    },
    async (request) => {
      const row = await findDeal(app.db, request.tenantId, request.params.deal_id);
      if (!row) throw notFound('Deal');
      return toDeal(row);
    },
  );

  app.delete(
    '/v0/deals/:deal_id',
    {
      schema: {
        ...extension,
        operationId: 'deleteDeal',
        summary: 'Delete deal (extension)',
        description: 'A CRM sync brings it back if the CRM still has it and it changes there.',
        params: DealParams,
        response: responses({ 204: NoContent }),
      },
    },
    async (request, reply) => {
      await app.db.transaction().execute(async (trx) => {
        const current = await findDeal(trx, request.tenantId, request.params.deal_id);
        if (!current) throw notFound('Deal');
        await deleteDeal(trx, current);
      });
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/v0/analytics/pipeline',
    {
      schema: {
        tags: ['analytics'],
        'x-extension': true,
        operationId: 'getPipeline',
        summary: 'Influenced pipeline: deals whose account visited, by page, audience, arm or segment (extension)',
        description: 'What counts as a touch, the models and what groupBy=arm can prove: docs/analytics.md, "Influenced pipeline".',
        querystring: PipelineQuery,
        response: responses({ 200: Pipeline }),
      },
    },
    async (request, reply) => sendPipeline(reply, await pipelineReport(app.db, request.tenantId, request.query)),
  );
};
