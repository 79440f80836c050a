import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../http/errors.js';
import { responses } from '../http/schemas.js';
import { getCallerKey } from './repository.js';
import { CallerKey } from './schemas.js';

/** One plugin, listed in app.ts; the route rules (API key, query parameters, dispatcher wake-ups) are in src/http/route-rules.ts. */
export const apiKeyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // A client (the console, a script) learns what its key may do without trying a write.
  app.get(
    '/v0/api_key',
    {
      schema: {
        tags: ['api keys'],
        'x-extension': true,
        operationId: 'getCallerApiKey',
        summary: 'The API key this request was made with: its scopes, expiry and limits (extension)',
        response: responses({ 200: CallerKey }),
      },
    },
    async (request) => {
      const key = await getCallerKey(app.db, request.tenantId, request.apiKeyId);
      if (!key) throw notFound('API key');
      return key;
    },
  );
};
