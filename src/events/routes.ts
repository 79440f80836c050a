import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../http/errors.js';
import { ListEnvelope, responses } from '../http/schemas.js';
import { getEvent, listEvents } from './repository.js';
import { Event, EventListQuery, EventParams } from './schemas.js';

const extension = { tags: ['webhooks'], 'x-extension': true };

/** One plugin, listed in app.ts; the route rules (API key, query parameters, dispatcher wake-ups) are in src/http/route-rules.ts. */
export const eventRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/v0/events',
    {
      schema: {
        ...extension,
        operationId: 'listEvents',
        summary: 'List events, newest first (extension)',
        querystring: EventListQuery,
        response: responses({ 200: ListEnvelope(Event) }),
      },
    },
    async (request) => listEvents(app.db, request.tenantId, request.query),
  );

  app.get(
    '/v0/events/:event_id',
    {
      schema: {
        ...extension,
        operationId: 'getEvent',
        summary: 'Get event (extension)',
        params: EventParams,
        response: responses({ 200: Event }),
      },
    },
    async (request) => {
      const event = await getEvent(app.db, request.tenantId, request.params.event_id);
      if (!event) throw notFound('Event');
      return event;
    },
  );
};
