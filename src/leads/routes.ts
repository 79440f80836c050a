import type { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { invalidField } from '../http/errors.js';
import { preferredType } from '../http/negotiate.js';
import { ListEnvelope, responses } from '../http/schemas.js';
import { livePage } from '../pages/index.js';
import { CSV_COLUMNS, leadsCsv } from './export.js';
import { leadFilters, listLeads } from './repository.js';
import { Lead, LeadListQuery } from './schemas.js';

const tags = ['leads'];

/** One plugin, listed in app.ts; the route rules (API key, query parameters, dispatcher wake-ups) are in src/http/route-rules.ts. */
export const leadRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/v0/leads',
    {
      schema: {
        tags,
        'x-extension': true,
        operationId: 'listLeads',
        summary: 'List leads, newest first (extension)',
        description:
          "Every lead form accepted on a served page, with its person, page, audience and the visit's UTM values. With `Accept: text/csv`: every match as CSV, streamed, without pagination (`cursor` and `limit` do not apply), quoted as the sessions' export.",
        querystring: LeadListQuery,
        response: {
          ...responses({}),
          200: {
            description: 'The page of leads (JSON, the default), or every matching lead (CSV)',
            content: {
              'application/json': { schema: ListEnvelope(Lead) },
              'text/csv': { schema: Type.Unsafe<Readable>({ type: 'string', description: `Header: ${CSV_COLUMNS.join(',')}` }) },
            },
          },
        },
      },
    },
    async (request, reply) => {
      if (request.query.pageId !== undefined) await livePage(app.db, request.tenantId, request.query.pageId);
      reply.header('vary', 'Accept');
      if (preferredType(request, ['application/json', 'text/csv']) === 'application/json') {
        return reply.type('application/json; charset=utf-8').send(await listLeads(app.db, request.tenantId, request.query));
      }
      const sent = new URL(request.url, 'http://localhost').searchParams;
      for (const param of ['cursor', 'limit']) {
        if (sent.has(param)) throw invalidField(`/${param}`, 'does not apply to a CSV export, which holds every match');
      }
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', 'attachment; filename="leads.csv"')
        .send(leadsCsv(app.db, request.tenantId, leadFilters(request.query)));
    },
  );
};
