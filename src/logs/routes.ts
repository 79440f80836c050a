import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { notFound } from '../http/errors.js';
import { createOnce } from '../http/idempotency.js';
import { emit } from '../events/outbox.js';
import { responses } from '../http/schemas.js';
import { createLog, findLog, ownerExists, toAccountLog, toPersonLog, type LogOwner } from './repository.js';
import { AccountLog, AccountLogParams, LogCreate, PersonLog, PersonLogParams } from './schemas.js';
import { PersonParams } from '../persons/schemas.js';
import { AccountParams } from '../accounts/schemas.js';
import type { LogsTable } from '../db/types.js';

const WHO = { person: 'Person', account: 'Account' } as const;

/** One plugin, listed in app.ts; the route rules (API key, query parameters, dispatcher wake-ups) are in src/http/route-rules.ts. */
export const logRoutes: FastifyPluginAsyncTypebox = async (app) => {
  /** A log key lives as long as its entry: the entry itself records it. */
  async function create<T>(
    request: FastifyRequest,
    reply: FastifyReply,
    owner: LogOwner,
    ownerId: string,
    body: LogCreate,
    map: (row: LogsTable) => T,
  ) {
    if (!(await ownerExists(app.db, owner, request.tenantId, ownerId))) throw notFound(WHO[owner]);
    const result = await createOnce(
      app.db,
      { tenantId: request.tenantId, scope: `${owner}_log:${ownerId}`, key: body.idempotencyKey, request: body, ttlMs: null },
      async (trx) => {
        const log = map(await createLog(trx, owner, request.tenantId, ownerId, body));
        await emit(trx, request.tenantId, `${owner}_log.created`, log);
        return log;
      },
    );
    if (result.replayed) reply.header('idempotent-replayed', 'true');
    return reply.code(201).send(result.body);
  }

  app.post(
    '/v0/persons/:person_id/logs',
    {
      schema: {
        tags: ['persons', 'extension'],
        operationId: 'createPersonLog',
        summary: 'Create person log (extension)',
        params: PersonParams,
        body: LogCreate,
        response: responses({ 201: PersonLog }),
      },
    },
    (request, reply) => create(request, reply, 'person', request.params.person_id, request.body, toPersonLog),
  );

  app.get(
    '/v0/persons/:person_id/logs/:person_log_id',
    {
      schema: {
        tags: ['persons'],
        operationId: 'getPersonLog',
        summary: 'Get person log',
        params: PersonLogParams,
        response: responses({ 200: PersonLog }),
      },
    },
    async (request) => {
      const row = await findLog(app.db, 'person', request.tenantId, request.params.person_id, request.params.person_log_id);
      if (!row) throw notFound('Person log');
      return toPersonLog(row);
    },
  );

  app.post(
    '/v0/accounts/:account_id/logs',
    {
      schema: {
        tags: ['accounts', 'extension'],
        operationId: 'createAccountLog',
        summary: 'Create account log (extension)',
        params: AccountParams,
        body: LogCreate,
        response: responses({ 201: AccountLog }),
      },
    },
    (request, reply) => create(request, reply, 'account', request.params.account_id, request.body, toAccountLog),
  );

  app.get(
    '/v0/accounts/:account_id/logs/:account_log_id',
    {
      schema: {
        tags: ['accounts'],
        operationId: 'getAccountLog',
        summary: 'Get account log',
        params: AccountLogParams,
        response: responses({ 200: AccountLog }),
      },
    },
    async (request) => {
      const row = await findLog(app.db, 'account', request.tenantId, request.params.account_id, request.params.account_log_id);
      if (!row) throw notFound('Account log');
      return toAccountLog(row);
    },
  );
};
