import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../http/errors.js';
import { createOnce, fromHeader, IdempotencyHeaders, sendOnce } from '../http/idempotency.js';
import { ListEnvelope, NoContent, responses } from '../http/schemas.js';
import {
  createAccount,
  deleteAccount,
  type DropAccountLogs,
  findAccount,
  getAccount,
  searchAccounts,
  updateAccount,
} from './repository.js';
import { Account, AccountCreate, AccountParams, AccountSearchQuery, AccountUpdate } from './schemas.js';

const tags = ['accounts'];
const extension = { tags, 'x-extension': true };

/** One plugin, listed in app.ts; the route rules (API key, query parameters, dispatcher wake-ups) are in src/http/route-rules.ts. */
export const accountRoutes: FastifyPluginAsyncTypebox<{ dropLogs: DropAccountLogs }> = async (app, { dropLogs }) => {
  app.post(
    '/v0/accounts',
    {
      schema: {
        ...extension,
        operationId: 'createAccount',
        headers: IdempotencyHeaders,
        summary: 'Create account (extension)',
        body: AccountCreate,
        response: responses({ 201: Account }),
      },
    },
    async (request, reply) =>
      sendOnce(reply, await createOnce(app.db, fromHeader(request), (trx) => createAccount(trx, request.tenantId, request.body))),
  );

  app.get(
    '/v0/accounts/:account_id',
    {
      schema: {
        ...extension,
        operationId: 'getAccount',
        summary: 'Get account (extension)',
        params: AccountParams,
        response: responses({ 200: Account }),
      },
    },
    async (request) => {
      const account = await getAccount(app.db, request.tenantId, request.params.account_id);
      if (!account) throw notFound('Account');
      return account;
    },
  );

  app.patch(
    '/v0/accounts/:account_id',
    {
      schema: {
        ...extension,
        operationId: 'updateAccount',
        summary: 'Update account (extension)',
        params: AccountParams,
        body: AccountUpdate,
        response: responses({ 200: Account }),
      },
    },
    async (request) =>
      app.db.transaction().execute(async (trx) => {
        const current = await findAccount(trx, request.tenantId, request.params.account_id);
        if (!current) throw notFound('Account');
        return updateAccount(trx, current, request.body);
      }),
  );

  app.delete(
    '/v0/accounts/:account_id',
    {
      schema: {
        ...extension,
        operationId: 'deleteAccount',
        summary: 'Delete account and its logs; persons stay (extension)',
        params: AccountParams,
        response: responses({ 204: NoContent }),
      },
    },
    async (request, reply) => {
      await app.db.transaction().execute(async (trx) => {
        const current = await findAccount(trx, request.tenantId, request.params.account_id);
        if (!current) throw notFound('Account');
        await deleteAccount(trx, current, dropLogs);
      });
      return reply.code(204).send(null);
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
