import { type Kysely, type RawBuilder, sql } from 'kysely';
import { isPostgres } from './adapter.js';
import type { Database } from './types.js';

/** A key asked in the coming statement, and the reads waiting for its row. */
interface Asked<K, R> {
  key: K;
  waiters: { resolve: (row: R | undefined) => void; reject: (err: unknown) => void }[];
}

/**
 * Keyed reads gathered over one turn of the event loop and asked in one statement, on PostgreSQL.
 *
 * Why: there every statement is a round trip that wakes a server process, and the profile of a
 * one-statement request (docs/benchmarks-history.md, issue 31, third session) spends about half of
 * the service's time on it: the `pg` client's protocol work and the socket write that wakes the
 * backend. Requests that arrive together (one poll of the event loop hands over many) share one
 * statement instead: the keys are gathered until `setImmediate`, which runs once the loop has
 * handled every request it read, so no request waits for a later one. Each read is still asked
 * after its request arrived, so an answer is never older than the request.
 *
 * On SQLite a statement is a function call, and inside a transaction the read must see the
 * transaction's own writes: both read one key at a time through `one`.
 */
export function batchedReads<K, R>(options: {
  /** The key's identity: two equal keys are asked once. */
  id: (key: K) => string;
  /** The identity of the key a row answers. */
  rowId: (row: R) => string;
  /** One key at a time: SQLite, and within a transaction. */
  one: (db: Kysely<Database>, key: K) => Promise<R | undefined>;
  /** Many keys in one statement (PostgreSQL). */
  many: (db: Kysely<Database>, keys: K[]) => Promise<R[]>;
  /** Keys a statement asks at most. */
  max?: number;
}): (db: Kysely<Database>, key: K) => Promise<R | undefined> {
  const max = options.max ?? 100;
  /** The keys waiting per database (there is one Kysely instance per open database). */
  const waiting = new WeakMap<Kysely<Database>, Map<string, Asked<K, R>>>();

  const flush = async (db: Kysely<Database>) => {
    const batch = waiting.get(db);
    waiting.delete(db);
    if (!batch) return;
    const entries = [...batch];
    const chunks: (typeof entries)[] = [];
    for (let start = 0; start < entries.length; start += max) chunks.push(entries.slice(start, start + max));
    await Promise.all(
      chunks.map(async (chunk) => {
        try {
          const rows = await options.many(
            db,
            chunk.map(([, asked]) => asked.key),
          );
          const byId = new Map(rows.map((row) => [options.rowId(row), row]));
          for (const [id, asked] of chunk) for (const w of asked.waiters) w.resolve(byId.get(id));
        } catch (err) {
          for (const [, asked] of chunk) for (const w of asked.waiters) w.reject(err);
        }
      }),
    );
  };

  return (db, key) => {
    if (db.isTransaction || !isPostgres(db)) return options.one(db, key);
    let batch = waiting.get(db);
    if (!batch) {
      batch = new Map();
      waiting.set(db, batch);
      setImmediate(() => void flush(db));
    }
    const id = options.id(key);
    let asked = batch.get(id);
    if (!asked) {
      asked = { key, waiters: [] };
      batch.set(id, asked);
    }
    const { waiters } = asked;
    return new Promise<R | undefined>((resolve, reject) => waiters.push({ resolve, reject }));
  };
}

/** A tenant's row named by its id. */
export interface TenantRowKey {
  tenantId: string;
  id: string;
}

/**
 * `batchedReads` of a tenant's row by its id, the commonest of them: `one` reads one key, `many`
 * the keys given as two lists, which `tenantAndIdIn` makes its condition.
 */
export function byTenantAndId<R extends { tenant_id: string; id: string }>(
  one: (db: Kysely<Database>, key: TenantRowKey) => Promise<R[]>,
  many: (db: Kysely<Database>, keys: { tenantIds: string[]; ids: string[] }) => Promise<R[]>,
): (db: Kysely<Database>, key: TenantRowKey) => Promise<R | undefined> {
  return batchedReads({
    id: (key: TenantRowKey) => `${key.tenantId} ${key.id}`,
    rowId: (row: R) => `${row.tenant_id} ${row.id}`,
    one: async (db, key) => (await one(db, key))[0],
    many: (db, keys) => many(db, { tenantIds: keys.map((k) => k.tenantId), ids: keys.map((k) => k.id) }),
  });
}

/** `(tenant_id, id)` among the pairs of two lists, on PostgreSQL: the condition of `byTenantAndId`'s `many`. */
export const tenantAndIdIn = (tenantIds: unknown, ids: unknown): RawBuilder<boolean> =>
  sql<boolean>`(tenant_id, id) in (select * from unnest(cast(${tenantIds} as text[]), cast(${ids} as text[])))`;
