import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { isUniqueViolation } from '../db/errors.js';
import { AppError } from '../http/errors.js';
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
      try {
        const account = await app.db.transaction().execute((trx) => createAccount(trx, request.tenantId, request.body));
        return reply.code(201).send(account);
      } catch (err) {
        if (isUniqueViolation(err)) {
          throw new AppError('conflict', `An account with domain "${request.body.domain}" already exists`, [
            { path: '/domain', message: 'is already the domain of another account' },
          ]);
        }
        throw err;
      }
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
