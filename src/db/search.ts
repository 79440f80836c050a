import { PostgresAdapter, sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from './types.js';

/**
 * `column LIKE '%text%'`, with the text's own `%`, `_` and `\` taken literally on both dialects.
 * Searches use it on lowercased copies with lowercased text; erasure, on stored text as stored.
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
export function substringMatch(db: Kysely<Database>, table: string, columns: string[], text: string, useIndex = true): RawBuilder<boolean> {
  const like = sql<boolean>`(${sql.join(
    columns.map((c) => contains(`${table}.${c}`, text)),
    sql` or `,
  )})`;
  if (db.getExecutor().adapter instanceof PostgresAdapter || !indexable(text) || !useIndex) return like;
  const fts = sql.table(`${table}_fts`);
  const phrase = `"${text.replace(/"/g, '""')}"`;
  return sql<boolean>`${sql.ref(`${table}.rowid`)} in (select rowid from ${fts} where ${fts} match ${phrase})`;
}

/** `column LIKE 'text%'` with the text taken literally: what ranks prefix matches first. */
export function startsWith(column: string, text: string): RawBuilder<boolean> {
  const pattern = `${text.replace(/[\\%_]/g, '\\$&')}%`;
  return sql<boolean>`${sql.ref(column)} like ${pattern} escape '\\'`;
}

/** A text of fewer than three characters has no trigram: no substring index can serve it. */
export const indexable = (text: string): boolean => [...text].length >= 3;

/**
 * How SQLite reads a page of matches, by how many there are: up to 300, by looking each match up;
 * beyond, by walking the list index in order, testing rows against the substring index's matches
 * (which must all be read first); and from 3,000 on, by testing each row with LIKE instead, since
 * a page fills after a few rows when matches are that common, while reading every match from the
 * substring index costs as much as counting them again.
 */
const DRIVE_UP_TO = 300;
const LIKE_FROM = 3000;

/** `driven`: the substring index's matches drive the query; `substringIndex`: matches come from it at all. */
export interface SearchPlan {
  driven: boolean;
  substringIndex: boolean;
}
const DRIVEN: SearchPlan = { driven: true, substringIndex: true };

const isPostgres = (db: Kysely<Database>) => db.getExecutor().adapter instanceof PostgresAdapter;

/**
 * `column = value` for the column that scopes a substring search (the tenant, the domain). With
 * `driven`, SQLite is told not to use that column's index (`+column`, a no-op otherwise), so the
 * FTS matches become the driving set: with few matches, walking a whole tenant's index to test
 * each row against them costs a hundred times more. PostgreSQL's planner weighs both on its own.
 */
export function scopeEquals(db: Kysely<Database>, column: string, value: string, driven: boolean): RawBuilder<boolean> {
  return driven && !isPostgres(db) ? sql<boolean>`+${sql.ref(column)} = ${value}` : sql<boolean>`${sql.ref(column)} = ${value}`;
}

/**
 * A search's page and its total: on SQLite the count comes first (driven by the substring index),
 * and its size decides how the page is read; on PostgreSQL both run at once.
 */
export async function searchWithTotal<R>(
  db: Kysely<Database>,
  substring: boolean,
  items: (plan: SearchPlan) => Promise<R[]>,
  count: (plan: SearchPlan) => Promise<number>,
): Promise<[R[], number]> {
  if (isPostgres(db) || !substring) {
    const plan = { driven: false, substringIndex: true };
    return Promise.all([items(plan), count(plan)]);
  }
  const total = await count(DRIVEN);
  const plan = total <= DRIVE_UP_TO ? DRIVEN : { driven: false, substringIndex: total < LIKE_FROM };
  return [await items(plan), total];
}
