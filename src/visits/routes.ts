import type { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createOnce, fromHeader, IdempotencyHeaders, sendOnce } from '../http/idempotency.js';
import { invalidField, notFound } from '../http/errors.js';
import { preferredType } from '../http/negotiate.js';
import { Type } from '@sinclair/typebox';
import { ListEnvelope, responses } from '../http/schemas.js';
import { findAudience } from '../audiences/index.js';
import { livePage, PageParams } from '../pages/index.js';
import { sessionsCsv, CSV_COLUMNS } from './export.js';
import { createSession, listSessions, sessionFilters } from './repository.js';
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
        description:
          "With `Accept: text/csv` (extension): every matching session as CSV, streamed, without pagination (`cursor` and `limit` do not apply); a header row of the field names, RFC 4180 quoting, and a `'` before any cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return.",
        params: PageParams,
        querystring: SessionListQuery,
        response: {
          ...responses({}),
          200: {
            description: 'The page of sessions (JSON, the default), or every matching session (CSV)',
            content: {
              'application/json': { schema: ListEnvelope(AudienceSession) },
              // Handed over as a stream, documented as the text it becomes.
              'text/csv': { schema: Type.Unsafe<Readable>({ type: 'string', description: `Header: ${CSV_COLUMNS.join(',')}` }) },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const page = await livePage(app.db, request.tenantId, request.params.page_id);
      // The page's own id names the page itself: its visits when it has no home audience (issue 45).
      const { audienceId } = request.query;
      if (audienceId !== undefined && audienceId !== page.id && !(await findAudience(app.db, request.tenantId, page.id, audienceId))) {
        throw notFound('Audience');
      }
      reply.header('vary', 'Accept');
      if (preferredType(request, ['application/json', 'text/csv']) === 'application/json') {
        return reply.type('application/json; charset=utf-8').send(await listSessions(app.db, page, request.query));
      }
      // As sent, not as validated: `limit` has a default.
      const sent = new URL(request.url, 'http://localhost').searchParams;
      for (const param of ['cursor', 'limit']) {
        if (sent.has(param)) throw invalidField(`/${param}`, 'does not apply to a CSV export, which holds every match');
      }
      const filters = sessionFilters(request.query);
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="audience-sessions-${page.id}.csv"`)
        .send(sessionsCsv(app.db, page, filters));
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
        const page = await livePage(trx, request.tenantId, request.params.page_id);
        return createSession(trx, page, request.body);
      });
      return sendOnce(reply, result);
    },
  );
};
