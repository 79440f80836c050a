import { sql, type Kysely } from 'kysely';
import type { Database } from '../types.js';

/**
 * Exact match counts of short texts without visiting the matches (migration 0014 keeps them):
 * `search_counts` holds, per scope, facet and gram (a distinct substring of 1 to `GRAM_MAX`
 * characters, or '' for every row), how many live rows have it, which is the count of a search
 * for that text. Longer texts are counted through the substring index: they match fewer rows.
 */
const GRAM_MAX = 3;

/** The `scope_id` of the row counting every row of a table, live or not (SQLite: its FTS table's rows). */
export const WHOLE_TABLE = '*';

/** A text short enough to be counted by its gram (in code points, as both databases count them). */
export const countable = (text: string): boolean => Array.from(text).length <= GRAM_MAX;

/** The tables `search_counts` counts. */
export type CountedTable = 'accounts' | 'page_links';

/**
 * How many live rows of `source` in `scopeId` (with one of `facets`) contain `text` (at most
 * GRAM_MAX characters), as an expression: a statement that reads a page can carry it.
 */
export function gramCount(source: CountedTable, scopeId: string, facets: string[], text: string) {
  return sql<number | string | bigint | null>`(select sum(n) from search_counts
    where source = ${source} and scope_id = ${scopeId} and facet in (${sql.join(facets)}) and gram = ${text})`;
}

/** The same, read on its own. */
export async function countByGram(
  db: Kysely<Database>,
  source: CountedTable,
  scopeId: string,
  facets: string[],
  text: string,
): Promise<number> {
  const { rows } = await sql<{ n: number | string | bigint | null }>`select ${gramCount(source, scopeId, facets, text)} as n`.execute(db);
  return Number(rows[0]?.n ?? 0);
}
