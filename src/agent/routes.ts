import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../http/errors.js';
import { createOnce, fromHeader, IdempotencyHeaders, replayIfKnown, sendOnce, workKey } from '../http/idempotency.js';
import { responses } from '../http/schemas.js';
import { findPage } from '../pages/repository.js';
import { PageParams } from '../pages/schemas.js';
import { countRegenerated } from './queue.js';
import { regenerate } from './regenerate.js';
import { RegenerateBody, Regenerated } from './schemas.js';

/**
 * The page agent's API. A regenerate request writes its work in batches (regenerate.ts) before its
 * answer is recorded under its Idempotency-Key: a completed request replays; a retry of one that
 * died halfway finds the versions it already queued by their work key and queues only the rest,
 * and answers with the request's whole count.
 */
export const agentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/v0/pages/:page_id/regenerate',
    {
      schema: {
        headers: IdempotencyHeaders,
        tags: ['pages'],
        'x-extension': true,
        operationId: 'regeneratePage',
        summary: "Queue a new version of the page's live audiences (or the listed ones) for the page agent (extension)",
        params: PageParams,
        body: RegenerateBody,
        response: responses({ 202: Regenerated }),
      },
    },
    async (request, reply) => {
      const idempotency = fromHeader(request, 202);
      const known = await replayIfKnown<Regenerated>(app.db, idempotency);
      if (known) return sendOnce(reply, known);
      const page = await findPage(app.db, request.tenantId, request.params.page_id);
      if (!page) throw notFound('Page');
      const key = workKey(idempotency);
      const queued = await regenerate(app.db, page, request.body?.audienceIds, key);
      const result = await createOnce(app.db, idempotency, async (trx) => ({
        queued: key === null ? queued : await countRegenerated(trx, key),
      }));
      return sendOnce(reply, result);
    },
  );
};
