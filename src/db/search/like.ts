import { sql, type Kysely, type RawBuilder } from 'kysely';
import { planOnce } from '../plan-once.js';
import type { Database } from '../types.js';

/** `text` for LIKE, its own `%`, `_` and `\` taken literally (with `escape '\'`). */
const likeLiteral = (text: string): string => text.replace(/[\\%_]/g, '\\$&');

/**
 * `column LIKE '%text%'`, with the text's own `%`, `_` and `\` taken literally on both dialects.
 * Searches use it on lowercased copies with lowercased text; erasure, on stored text as stored.
 */
export function contains(column: string, text: string): RawBuilder<boolean> {
  return sql<boolean>`${sql.ref(column)} like ${`%${likeLiteral(text)}%`} escape '\\'`;
}

/**
 * `lower(column) LIKE '%text%'` with `text` lowercased, its wildcards taken literally. Both
 * databases fold A-Z alike here; beyond ASCII they differ (SQLite folds nothing), so callers that
 * need more pass ASCII text and check the rows they get in code (erasure's matcher).
 */
export function containsAsciiFolded(column: string, text: string): RawBuilder<boolean> {
  return sql<boolean>`lower(${sql.ref(column)}) like ${`%${likeLiteral(text.toLowerCase())}%`} escape '\\'`;
}

/** Whether any of `table`'s `columns` contains `text`: what every match is tested with where no index serves. */
export const anyContains = (table: string, columns: readonly string[], text: string): RawBuilder<boolean> =>
  sql<boolean>`(${sql.join(
    columns.map((c) => contains(`${table}.${c}`, text)),
    sql` or `,
  )})`;

/** `column LIKE 'text%'` (a column, or an expression) with the text taken literally: what ranks prefix matches first. */
export function startsWith(db: Kysely<Database>, column: string | RawBuilder<unknown>, text: string): RawBuilder<boolean> {
  return sql<boolean>`${typeof column === 'string' ? sql.ref(column) : column} like ${planOnce(db, `${likeLiteral(text)}%`)} escape '\\'`;
}

/** A text of fewer than three characters has no trigram: no substring index can serve it. */
export const indexable = (text: string): boolean => [...text].length >= 3;
