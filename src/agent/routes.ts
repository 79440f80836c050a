import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createOnce, fromHeader, IdempotencyHeaders, replayIfKnown, sendOnce, workKey } from '../http/idempotency.js';
import { responses } from '../http/schemas.js';
import { livePage, PageParams } from '../pages/index.js';
import { countRegenerated } from '../audiences/index.js';
import { regenerate } from './regenerate.js';
import { AgentInfo, RegenerateBody, Regenerated } from './schemas.js';

/**
 * The page agent's API. A regenerate request writes its work in batches (regenerate.ts) before its
 * answer is recorded under its Idempotency-Key: a completed request replays; a retry of one that
 * died halfway finds the versions it already queued by their work key and queues only the rest,
 * and answers with the request's whole count. A dry run (`dryRun: true`) answers 200 with what
 * the request would do and writes nothing, not even its key.
 */
export const agentRoutes: FastifyPluginAsyncTypebox<{ info: AgentInfo }> = async (app, options) => {
  // The console says where Regenerate's copy comes from; no secret (the model's key, its URL) is told.
  app.get(
    '/v0/agent',
    {
      schema: {
        tags: ['pages'],
        'x-extension': true,
        operationId: 'getAgentInfo',
        summary: 'What the page agent writes new versions with: the template generator or a configured model (extension)',
        response: responses({ 200: AgentInfo }),
      },
    },
    async () => options.info,
  );

  app.post(
    '/v0/pages/:page_id/regenerate',
    {
      schema: {
        headers: IdempotencyHeaders,
        tags: ['pages'],
        'x-extension': true,
        operationId: 'regeneratePage',
        summary:
          "Queue a new version of the page's live audiences for the page agent, skipping those a person wrote unless includeWritten (or exactly the listed ones) (extension)",
        params: PageParams,
        body: RegenerateBody,
        response: responses({ 200: Regenerated, 202: Regenerated }),
      },
    },
    async (request, reply) => {
      if (request.body?.dryRun === true) {
        // Reads only: nothing to replay or to remember under a key.
        const page = await livePage(app.db, request.tenantId, request.params.page_id);
        return reply.code(200).send({ ...(await regenerate(app.db, page, request.body, null)), dryRun: true });
      }
      const idempotency = fromHeader(request, 202);
      const known = await replayIfKnown<Regenerated>(app.db, idempotency);
      if (known) return sendOnce(reply, known);
      const page = await livePage(app.db, request.tenantId, request.params.page_id);
      const key = workKey(idempotency);
      const { queued, skipped } = await regenerate(app.db, page, request.body, key);
      const result = await createOnce(app.db, idempotency, async (trx) => ({
        queued: key === null ? queued : await countRegenerated(trx, key),
        skipped,
      }));
      return sendOnce(reply, result);
    },
  );
};
