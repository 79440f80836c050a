import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createOnce, fromHeader, IdempotencyHeaders, sendOnce } from '../http/idempotency.js';
import { notFound } from '../http/errors.js';
import { ListEnvelope, responses } from '../http/schemas.js';
import { findAudience } from '../audiences/repository.js';
import { findPage } from '../pages/repository.js';
import { PageParams } from '../pages/schemas.js';
import { createSession, listSessions } from './repository.js';
import { AudienceSession, SessionCreate, SessionListQuery } from './schemas.js';

const tags = ['audience sessions'];

/** One plugin, listed in app.ts; the route rules (API key, query parameters, dispatcher wake-ups) are in src/http/route-rules.ts. */
export const sessionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/v0/pages/:page_id/audience_sessions',
    {
      schema: {
        tags,
        operationId: 'listAudienceSessions',
        summary: 'List audience sessions',
        params: PageParams,
        querystring: SessionListQuery,
        response: responses({ 200: ListEnvelope(AudienceSession) }),
      },
    },
    async (request) => {
      const page = await findPage(app.db, request.tenantId, request.params.page_id);
      if (!page) throw notFound('Page');
      if (request.query.audienceId !== undefined && !(await findAudience(app.db, request.tenantId, page.id, request.query.audienceId))) {
        throw notFound('Audience');
      }
      return listSessions(app.db, page, request.query);
    },
  );

  app.post(
    '/v0/pages/:page_id/audience_sessions',
    {
      schema: {
        headers: IdempotencyHeaders,
        tags,
        'x-extension': true,
        operationId: 'createAudienceSession',
        summary: 'Record an audience session (extension)',
        params: PageParams,
        body: SessionCreate,
        response: responses({ 201: AudienceSession }),
      },
    },
    async (request, reply) => {
      const result = await createOnce(app.db, fromHeader(request), async (trx) => {
        const page = await findPage(trx, request.tenantId, request.params.page_id);
        if (!page) throw notFound('Page');
        return createSession(trx, page, request.body);
      });
      return sendOnce(reply, result);
    },
  );
};
