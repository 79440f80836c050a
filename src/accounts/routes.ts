import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ListEnvelope, responses } from '../http/schemas.js';
import { createAccount, searchAccounts } from './repository.js';
import { Account, AccountCreate, AccountSearchQuery } from './schemas.js';

const tags = ['accounts'];

/** One plugin, listed in app.ts; the route rules (API key, query parameters, dispatcher wake-ups) are in src/http/route-rules.ts. */
export const accountRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/v0/accounts',
    {
      schema: {
        tags: [...tags, 'extension'],
        operationId: 'createAccount',
        summary: 'Create account (extension)',
        body: AccountCreate,
        response: responses({ 201: Account }),
      },
    },
    async (request, reply) => {
      const account = await app.db.transaction().execute((trx) => createAccount(trx, request.tenantId, request.body));
      return reply.code(201).send(account);
    },
  );

  app.get(
    '/v0/accounts/search',
    {
      schema: {
        tags,
        operationId: 'searchAccounts',
        summary: 'Search accounts',
        querystring: AccountSearchQuery,
        response: responses({ 200: ListEnvelope(Account) }),
      },
    },
    async (request) => searchAccounts(app.db, request.tenantId, request.query),
  );
};
