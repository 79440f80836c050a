import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import { isUniqueViolation } from '../db/errors.js';
import type { Mentions } from '../db/mentions.js';
import type { Database } from '../db/types.js';
import { now } from '../time.js';
import { AppError } from './errors.js';

/**
 * One mechanism for every endpoint that takes an `idempotencyKey`: the key is recorded with the
 * response in the same transaction as the change, under a primary key on (tenant, scope, key).
 * So a change and its key commit together or not at all, and two requests racing on one key
 * (even on two instances) create one resource: the loser's insert conflicts and it replays.
 */
export interface IdempotentRequest {
  tenantId: string;
  /** What the key is unique within, e.g. `person_log:<personId>`. */
  scope: string;
  key: string | null | undefined;
  /** The request as the client sent it: a replay must carry the same one. */
  request: unknown;
  /** How long the key is remembered; null keeps it as long as the resource it made. */
  ttlMs: number | null;
  /** The status of the first answer, which a replay repeats (201 unless given). */
  status?: number;
  /** The status when the answer decides it (an upsert: 201 made, 200 updated); `status` otherwise. */
  statusOf?: (body: unknown) => number;
}

/** A replay answers the stored response, or what `render` makes of it (e.g. fresh signed URLs). */
export type Render<T> = (stored: T) => Promise<T>;

export interface IdempotentResult<T> {
  body: T;
  status: number;
  replayed: boolean;
}

class KeyTaken extends Error {}

export async function createOnce<T>(
  db: Kysely<Database>,
  req: IdempotentRequest,
  create: (trx: Transaction<Database>) => Promise<T>,
  render: Render<T> = async (stored) => stored,
): Promise<IdempotentResult<T>> {
  const fixed = req.status ?? 201;
  const statusOf = (body: T) => req.statusOf?.(body) ?? fixed;
  if (!req.key) {
    const body = await db.transaction().execute(create);
    return { body, status: statusOf(body), replayed: false };
  }
  const key = req.key;
  const hash = requestHash(req.request);

  const stored = await findLive(db, req.tenantId, req.scope, key);
  if (stored) return replay(stored, hash, key, render);

  try {
    const body = await db.transaction().execute(async (trx) => {
      const body = await create(trx);
      const createdAt = now();
      const record = {
        request_hash: hash,
        response_status: statusOf(body),
        response_body: JSON.stringify(body),
        created_at: createdAt,
        expires_at: req.ttlMs === null ? null : new Date(Date.now() + req.ttlMs).toISOString(),
      };
      // An expired record of the same key is taken over; a live one means another request won.
      const result = await trx
        .insertInto('idempotency_keys')
        .values({ tenant_id: req.tenantId, scope: req.scope, key, ...record })
        .onConflict((oc) =>
          oc.columns(['tenant_id', 'scope', 'key']).doUpdateSet(record).where('idempotency_keys.expires_at', '<=', createdAt),
        )
        .executeTakeFirst();
      if (Number(result.numInsertedOrUpdatedRows ?? 0n) === 0) throw new KeyTaken();
      return body;
    });
    return { body, status: statusOf(body), replayed: false };
  } catch (err) {
    if (!(err instanceof KeyTaken) && !isUniqueViolation(err)) throw err;
    // Read in a transaction: on SQLite's group commit (db/sqlite.ts) the winner may have finished
    // in the group this request saw it in, but not yet be committed. A transaction sees it, and
    // its commit waits for the winner's, so the replay is never sent ahead of the original.
    const winner = await db.transaction().execute((trx) => findLive(trx, req.tenantId, req.scope, key));
    if (winner) return replay(winner, hash, key, render);
    if (err instanceof KeyTaken) {
      throw new AppError(
        'idempotency_key_in_progress',
        `A request with idempotencyKey "${key}" is still in progress; retry shortly`,
        undefined,
        { 'retry-after': '1' },
      );
    }
    throw err;
  }
}

/**
 * The stored answer of a request already made with this key, if any: for a create whose costly
 * part runs outside the transaction (storing a file's bytes), so a replay never repeats it.
 */
export async function replayIfKnown<T>(
  db: Kysely<Database>,
  req: IdempotentRequest,
  render: Render<T> = async (stored) => stored,
): Promise<IdempotentResult<T> | undefined> {
  if (!req.key) return undefined;
  const stored = await findLive(db, req.tenantId, req.scope, req.key);
  return stored && replay(stored, requestHash(req.request), req.key, render);
}

async function findLive(db: Kysely<Database>, tenantId: string, scope: string, key: string) {
  return db
    .selectFrom('idempotency_keys')
    .select(['request_hash', 'response_status', 'response_body'])
    .where('tenant_id', '=', tenantId)
    .where('scope', '=', scope)
    .where('key', '=', key)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now())]))
    .executeTakeFirst();
}

async function replay<T>(
  stored: { request_hash: string; response_status: number; response_body: string },
  hash: string,
  key: string,
  render: Render<T>,
): Promise<IdempotentResult<T>> {
  if (stored.request_hash !== hash) {
    throw new AppError('idempotency_key_reused', `Idempotency key "${key}" was already used with a different request`);
  }
  return { body: await render(JSON.parse(stored.response_body) as T), status: Number(stored.response_status), replayed: true };
}

/**
 * A stable name for the work of a keyed request that is written in several transactions before
 * `createOnce` records its answer (a regenerate's batches): the same key with the same request
 * gives the same name, so the work can be found again by a retry. Null without a key.
 */
export function workKey(req: IdempotentRequest): string | null {
  if (!req.key) return null;
  return createHash('sha256')
    .update(JSON.stringify([req.tenantId, req.scope, req.key, requestHash(req.request)]))
    .digest('hex');
}

/** SHA-256 of the request with object keys sorted, so key order alone never counts as a difference. */
function requestHash(request: unknown): string {
  return createHash('sha256').update(JSON.stringify(request, sortedKeys)).digest('hex');
}

function sortedKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The `Idempotency-Key` request header (the IETF httpapi draft's name), accepted by every POST of
 * the API: one key per tenant, remembered 24 hours, bound to the method, path and body it first came
 * with (the same key on another request is a 422, as the draft and Stripe do).
 */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[\\x21-\\x7E]+$',
      description:
        'Makes a retried POST safe: the same key with the same request replays the first answer (`idempotent-replayed: true`) for 24 hours; with another request, 422 `idempotency_key_reused`; while the first is in flight, 409 with Retry-After',
    }),
  ),
});

/** The idempotency of a request by its `Idempotency-Key` header (none without the header). */
export function fromHeader(request: FastifyRequest, status = 201): IdempotentRequest {
  const key = request.headers['idempotency-key'];
  // An uploaded file is hashed once here rather than serialized byte by byte into the request hash.
  const body = Buffer.isBuffer(request.body) ? { sha256: createHash('sha256').update(request.body).digest('hex') } : (request.body ?? null);
  return {
    tenantId: request.tenantId,
    scope: 'header',
    key: typeof key === 'string' ? key : undefined,
    request: { method: request.method, path: request.url.split('?', 1)[0], body },
    ttlMs: DAY_MS,
    status,
  };
}

/**
 * For the endpoints whose body carries the reference's own `idempotencyKey`: that key governs
 * when given (its scope and lifetime are the reference's); the header otherwise.
 */
export function fromBodyOrHeader(request: FastifyRequest, byBody: IdempotentRequest): IdempotentRequest {
  return byBody.key ? byBody : fromHeader(request, byBody.status);
}

/** Answers a create (or action) made once: its status, and `idempotent-replayed: true` on a replay. */
export function sendOnce<T>(reply: FastifyReply, result: IdempotentResult<T>): FastifyReply {
  if (result.replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(result.status).send(result.body);
}

/** Housekeeping (jobs/maintenance.ts): an expired key is already ignored (and taken over) above; this only frees the space. */
export async function pruneIdempotencyKeys(db: Kysely<Database>): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('expires_at', '<', now()).execute();
}

/** A person's erasure (persons/erasure.ts): remembered requests whose key or answer mentions them are forgotten (few: they live 24 hours). */
export async function forgetKeysMentioning(trx: Transaction<Database>, tenantId: string, mentions: Mentions): Promise<void> {
  const rows = await trx
    .selectFrom('idempotency_keys')
    .select(['scope', 'key', 'response_body'])
    .where('tenant_id', '=', tenantId)
    .where((eb) => eb.or([mentions.mayMention('key'), mentions.mayMention('response_body')]))
    .execute();
  for (const key of rows.filter((r) => mentions.test(r.key) || mentions.test(r.response_body))) {
    await trx
      .deleteFrom('idempotency_keys')
      .where('tenant_id', '=', tenantId)
      .where('scope', '=', key.scope)
      .where('key', '=', key.key)
      .execute();
  }
}
