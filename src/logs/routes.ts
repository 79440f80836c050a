import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { AccountParams } from '../accounts/index.js';
import type { Database, LogsTable } from '../db/types.js';
import { emit } from '../events/index.js';
import { notFound } from '../http/errors.js';
import { createOnce, fromBodyOrHeader, IdempotencyHeaders, sendOnce } from '../http/idempotency.js';
import { ListEnvelope, NoContent, responses } from '../http/schemas.js';
import {
  assertLive,
  createLog,
  deleteLog,
  findLog,
  listLogs,
  type LogOwner,
  ownerExists,
  toAccountLog,
  toPersonLog,
  updateLog,
} from './repository.js';
import {
  AccountLog,
  AccountLogParams,
  AccountLogUpdate,
  LogCreate,
  LogListQuery,
  PersonLog,
  PersonLogParams,
  PersonLogUpdate,
} from './schemas.js';
import { settle } from '../http/round-trip.js';

// The path's person, declared here: persons erase their logs through this area, so logs never import persons.
const PersonParams = Type.Object({ person_id: Type.String() });

/** Person logs and account logs have the same operations; each owner's routes differ only in names. */
const OWNERS = {
  person: {
    who: 'Person',
    tag: 'persons',
    Name: 'PersonLog',
    base: '/v0/persons/:person_id/logs',
    ownerParam: 'person_id',
    logParam: 'person_log_id',
    OwnerParams: PersonParams,
    LogParams: PersonLogParams,
    Log: PersonLog,
    Update: PersonLogUpdate,
    map: toPersonLog,
  },
  account: {
    who: 'Account',
    tag: 'accounts',
    Name: 'AccountLog',
    base: '/v0/accounts/:account_id/logs',
    ownerParam: 'account_id',
    logParam: 'account_log_id',
    OwnerParams: AccountParams,
    LogParams: AccountLogParams,
    Log: AccountLog,
    Update: AccountLogUpdate,
    map: toAccountLog,
  },
} as const;

type Params = Record<string, string>;

/** One plugin, listed in app.ts; the route rules (API key, query parameters, dispatcher wake-ups) are in src/http/route-rules.ts. */
export const logRoutes: FastifyPluginAsyncTypebox = async (app) => {
  for (const owner of ['person', 'account'] as const) {
    const o = OWNERS[owner];
    const map = o.map as (row: LogsTable) => unknown;
    const ids = (request: FastifyRequest) => {
      const params = request.params as Params;
      return { ownerId: params[o.ownerParam] ?? '', logId: params[o.logParam] ?? '' };
    };
    const entryOf = async (db: Kysely<Database>, request: FastifyRequest) => {
      const { ownerId, logId } = ids(request);
      const row = await findLog(db, owner, request.tenantId, ownerId, logId);
      if (!row) throw notFound(`${o.who} log`);
      return row;
    };
    const schema = (s: { summary: string; operationId: string; extension?: boolean; response: Record<number, TSchema> }) => ({
      tags: [o.tag],
      ...(s.extension === false ? {} : { 'x-extension': true }),
      operationId: s.operationId,
      summary: s.extension === false ? s.summary : `${s.summary} (extension)`,
      response: responses(s.response),
    });

    app.post(
      o.base,
      {
        schema: {
          headers: IdempotencyHeaders,
          ...schema({ summary: `Create ${owner} log`, operationId: `create${o.Name}`, response: { 201: o.Log } }),
          params: o.OwnerParams,
          body: LogCreate,
        },
      },
      (request, reply) => create(request, reply, owner, ids(request).ownerId, request.body, map),
    );

    app.get(
      o.base,
      {
        schema: {
          ...schema({ summary: `List ${owner} logs, newest first`, operationId: `list${o.Name}s`, response: { 200: ListEnvelope(o.Log) } }),
          params: o.OwnerParams,
          querystring: LogListQuery,
        },
      },
      async (request) => {
        const { ownerId } = ids(request);
        if (!(await ownerExists(app.db, owner, request.tenantId, ownerId))) throw notFound(o.who);
        return listLogs(app.db, owner, request.tenantId, ownerId, request.query, map);
      },
    );

    app.get(
      `${o.base}/:${o.logParam}`,
      {
        schema: {
          ...schema({ summary: `Get ${owner} log`, operationId: `get${o.Name}`, extension: false, response: { 200: o.Log } }),
          params: o.LogParams,
        },
      },
      async (request) => map(await entryOf(app.db, request)),
    );

    app.patch(
      `${o.base}/:${o.logParam}`,
      {
        schema: {
          ...schema({ summary: `Replace the payload of a ${owner} log`, operationId: `update${o.Name}`, response: { 200: o.Log } }),
          params: o.LogParams,
          body: o.Update,
        },
      },
      async (request) =>
        app.db.transaction().execute(async (trx) => {
          const entry = await entryOf(trx, request);
          assertLive(entry);
          const shown = map(entry);
          const { payload } = settle(o.Update, request.body, shown as object);
          if (payload === undefined) return shown;
          const log = map(await updateLog(trx, owner, entry, payload));
          await emit(trx, request.tenantId, `${owner}_log.updated`, log);
          return log;
        }),
    );

    app.delete(
      `${o.base}/:${o.logParam}`,
      {
        schema: {
          ...schema({
            summary: `Delete a ${owner} log (soft: it stays readable with deletedAt)`,
            operationId: `delete${o.Name}`,
            response: { 204: NoContent },
          }),
          params: o.LogParams,
        },
      },
      async (request, reply) => {
        await app.db.transaction().execute(async (trx) => {
          const deleted = await deleteLog(trx, owner, await entryOf(trx, request));
          if (deleted) await emit(trx, request.tenantId, `${owner}_log.deleted`, map(deleted));
        });
        return reply.code(204).send(null);
      },
    );
  }

  /** A log key lives as long as its entry; a replay answers the entry as it is now (deleted, maybe). */
  async function create(
    request: FastifyRequest,
    reply: FastifyReply,
    owner: LogOwner,
    ownerId: string,
    body: LogCreate,
    map: (row: LogsTable) => unknown,
  ) {
    if (!(await ownerExists(app.db, owner, request.tenantId, ownerId))) throw notFound(OWNERS[owner].who);
    const byBody = { tenantId: request.tenantId, scope: `${owner}_log:${ownerId}`, key: body.idempotencyKey, request: body, ttlMs: null };
    const result = await createOnce(
      app.db,
      fromBodyOrHeader(request, byBody),
      async (trx) => {
        const log = map(await createLog(trx, owner, request.tenantId, ownerId, body));
        await emit(trx, request.tenantId, `${owner}_log.created`, log);
        return log;
      },
      async (stored) => {
        const id = (stored as Record<string, unknown>)[owner === 'person' ? 'personLogId' : 'accountLogId'];
        const row = typeof id === 'string' ? await findLog(app.db, owner, request.tenantId, ownerId, id) : undefined;
        return row ? map(row) : stored;
      },
    );
    return sendOnce(reply, result);
  }
};
