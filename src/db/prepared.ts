import { CompiledQuery, SqliteAdapter, type Compilable, type Kysely } from 'kysely';
import type { Database } from './types.js';

const PLACEHOLDER = Symbol('placeholder');
interface Placeholder {
  [PLACEHOLDER]: string;
}
const isPlaceholder = (value: unknown): value is Placeholder => typeof value === 'object' && value !== null && PLACEHOLDER in value;

interface Template {
  sql: string;
  parameters: readonly unknown[];
}

/**
 * A query of fixed shape, built and compiled by Kysely once per dialect instead of on every call.
 * On the hot paths (the key lookup, reading and creating a person) building and compiling cost
 * as much as the database running the query. `build` receives placeholders in place of the
 * parameters; each call substitutes the real values. The shape must not depend on the values
 * (no `$if`, no lists of varying length): those queries stay ordinary Kysely queries.
 */
export function prepared<P extends object, O>(
  build: (db: Kysely<Database>, params: P) => Compilable<O>,
): (db: Kysely<Database>, params: P) => Promise<O[]> {
  const templates = new Map<unknown, Template>();
  const placeholders = new Proxy({} as P, { get: (_target, name) => ({ [PLACEHOLDER]: String(name) }) });
  return async (db, params) => {
    // Keyed by the adapter's class: the same query compiles to different SQL on each dialect.
    const dialect = db.getExecutor().adapter.constructor;
    let template = templates.get(dialect);
    if (!template) {
      const { sql, parameters } = build(db, placeholders).compile();
      template = { sql: db.getExecutor().adapter instanceof SqliteAdapter ? planOnce(sql, parameters.length) : sql, parameters };
      templates.set(dialect, template);
    }
    const values = template.parameters.map((p) => (isPlaceholder(p) ? (params as Record<string, unknown>)[p[PLACEHOLDER]] : p));
    const result = await db.executeQuery<O>(CompiledQuery.raw(template.sql, values));
    return result.rows;
  };
}

/**
 * The SQLite text with each parameter written `+?` (a no-op on the value, and no affinity, like
 * `?`): SQLite plans it once. With statistics of ANALYZE (sqlite_stat4, which better-sqlite3's
 * SQLite keeps), a bare `?` compared with an indexed column makes SQLite plan the statement anew
 * on every run for the values bound, which cost several times the lookup itself; these queries are
 * keyed lookups whose plan does not depend on the values. Left as is if a `?` is not a parameter.
 */
function planOnce(sql: string, parameters: number): string {
  return sql.split('?').length - 1 === parameters ? sql.replaceAll('?', '+?') : sql;
}
