import type { Kysely } from 'kysely';
import type { Database } from './types.js';

/**
 * A value per open database, made at its first use: one for a Kysely instance and every
 * transaction of it (they share its adapter), never one shared by two databases a process opens
 * (each test builds apps of its own). What an in-process cache of data hangs on.
 */
export function perDatabase<T>(make: () => T): (db: Kysely<Database>) => T {
  const values = new WeakMap<object, T>();
  return (db) => {
    const key = db.getExecutor().adapter;
    let value = values.get(key);
    if (value === undefined) {
      value = make();
      values.set(key, value);
    }
    return value;
  };
}
