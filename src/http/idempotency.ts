import { createHash } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { isUniqueViolation } from '../db/errors.js';
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
}

/** A replay answers the stored response, or what `render` makes of it (e.g. fresh signed URLs). */
export type Render<T> = (stored: T) => Promise<T>;

export interface IdempotentResult<T> {
  body: T;
  replayed: boolean;
}

class KeyTaken extends Error {}

export async function createOnce<T>(
  db: Kysely<Database>,
  req: IdempotentRequest,
  create: (trx: Transaction<Database>) => Promise<T>,
  render: Render<T> = async (stored) => stored,
): Promise<IdempotentResult<T>> {
  if (!req.key) return { body: await db.transaction().execute(create), replayed: false };
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
        response_status: 201,
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
    return { body, replayed: false };
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

async function findLive(db: Kysely<Database>, tenantId: string, scope: string, key: string) {
  return db
    .selectFrom('idempotency_keys')
    .select(['request_hash', 'response_body'])
    .where('tenant_id', '=', tenantId)
    .where('scope', '=', scope)
    .where('key', '=', key)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now())]))
    .executeTakeFirst();
}

async function replay<T>(
  stored: { request_hash: string; response_body: string },
  hash: string,
  key: string,
  render: Render<T>,
): Promise<IdempotentResult<T>> {
  if (stored.request_hash !== hash) {
    throw new AppError('idempotency_key_reused', `idempotencyKey "${key}" was already used with a different request body`);
  }
  return { body: await render(JSON.parse(stored.response_body) as T), replayed: true };
}

/** SHA-256 of the request with object keys sorted, so key order alone never counts as a difference. */
function requestHash(request: unknown): string {
  return createHash('sha256').update(JSON.stringify(request, sortedKeys)).digest('hex');
}

function sortedKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
