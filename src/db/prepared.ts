import { CompiledQuery, type Compilable, type Kysely } from 'kysely';
import { isPostgres } from './adapter.js';
import { registerHot } from './named-statements.js';
import { planEachOnce } from './plan-once.js';
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
  /** Whether PostgreSQL may run it as a named statement (db/named-statements.ts); a connection holds few. */
  named = true,
): (db: Kysely<Database>, params: P) => Promise<O[]> {
  const templates = new Map<unknown, Template>();
  const placeholders = new Proxy({} as P, { get: (_target, name) => ({ [PLACEHOLDER]: String(name) }) });
  return async (db, params) => {
    // Keyed by the adapter's class: the same query compiles to different SQL on each dialect.
    const dialect = db.getExecutor().adapter.constructor;
    let template = templates.get(dialect);
    if (!template) {
      // Keyed lookups and writes whose plan depends on no value: planned once on SQLite.
      const compiled = build(db, placeholders).compile();
      template = { sql: planEachOnce(db, compiled), parameters: compiled.parameters };
      templates.set(dialect, template);
      // A named statement on PostgreSQL where allowed (db/named-statements.ts).
      if (named && isPostgres(db)) registerHot(template.sql);
    }
    const values = template.parameters.map((p) => (isPlaceholder(p) ? (params as Record<string, unknown>)[p[PLACEHOLDER]] : p));
    const result = await db.executeQuery<O>(CompiledQuery.raw(template.sql, values));
    return result.rows;
  };
}

const NAMED_SHAPES = 4;

/**
 * `prepared` for a query whose shape depends on which of a fixed set of names it is given (a
 * PATCH's columns): built and compiled once per shape. `shape` names the variant, e.g. the patched
 * columns in the order `build` uses them; `build` must make the same query for the same `shape`.
 * The shapes are bounded by the subsets of those names, so the map needs no eviction. Only the
 * first NAMED_SHAPES shapes become PostgreSQL named statements: a connection holds 64, and a
 * family's rarer shapes must not take the places of the hot paths' statements.
 */
export function preparedByShape<P extends object, O>(
  build: (db: Kysely<Database>, params: P, shape: string) => Compilable<O>,
): (db: Kysely<Database>, shape: string, params: P) => Promise<O[]> {
  const shapes = new Map<string, (db: Kysely<Database>, params: P) => Promise<O[]>>();
  return (db, shape, params) => {
    let query = shapes.get(shape);
    if (!query) {
      query = prepared((db, p: P) => build(db, p, shape), shapes.size < NAMED_SHAPES);
      shapes.set(shape, query);
    }
    return query(db, params);
  };
}
