import { PostgresAdapter, sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from './types.js';

/**
 * `column LIKE '%text%'`, with the text's own `%`, `_` and `\` taken literally on both dialects.
 * Columns searched this way hold lowercased copies, and `text` must be lowercased too.
 */
export function contains(column: string, text: string): RawBuilder<boolean> {
  const pattern = `%${text.replace(/[\\%_]/g, '\\$&')}%`;
  return sql<boolean>`${sql.ref(column)} like ${pattern} escape '\\'`;
}

/**
 * Rows of `table` where any of `columns` contains `text`, through the substring index that
 * `createSubstringIndex` made. PostgreSQL's trigram indexes serve plain LIKE; SQLite's FTS5
 * trigram table is asked for the text as one phrase (a substring match). Texts shorter than a
 * trigram cannot use either index and fall back to LIKE over the caller's other filters.
 */
export function substringMatch(db: Kysely<Database>, table: string, columns: string[], text: string): RawBuilder<boolean> {
  const like = sql<boolean>`(${sql.join(columns.map((c) => contains(`${table}.${c}`, text)), sql` or `)})`;
  if (db.getExecutor().adapter instanceof PostgresAdapter || [...text].length < 3) return like;
  const fts = sql.table(`${table}_fts`);
  const phrase = `"${text.replace(/"/g, '""')}"`;
  return sql<boolean>`${sql.ref(`${table}.rowid`)} in (select rowid from ${fts} where ${fts} match ${phrase})`;
}

/** `column LIKE 'text%'` with the text taken literally: what ranks prefix matches first. */
export function startsWith(column: string, text: string): RawBuilder<boolean> {
  const pattern = `${text.replace(/[\\%_]/g, '\\$&')}%`;
  return sql<boolean>`${sql.ref(column)} like ${pattern} escape '\\'`;
}
