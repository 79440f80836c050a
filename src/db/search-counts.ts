import { sql, type Kysely } from 'kysely';
import { isPostgres } from './adapter.js';
import type { Database } from './types.js';

/**
 * Exact match counts of short search texts without visiting the matches. A row whose searched
 * columns contain a text of at most `GRAM_MAX` characters contains it as one of its grams (its
 * distinct substrings of 1 to `GRAM_MAX` characters, and '' for "every row"). So
 * `search_counts` keeps, per scope (a tenant, a domain), facet (a filter value, or '') and gram,
 * how many live rows have that gram: the count of a search for that text. Triggers keep it in step
 * with every write, in the writing transaction (`createSearchCounts` in migrations/dialect.ts).
 * Longer texts are counted through the substring index, as before: they match fewer rows.
 */
export const GRAM_MAX = 3;

/** What a search counts by grams: rows of `table`, per `scope` column and `facet` column, while `live`. */
export interface CountedSearch {
  source: 'accounts' | 'page_links';
  table: 'accounts' | 'page_links';
  scope: string;
  /** A column whose value is a filter of the search, counted apart; null when there is none. */
  facet: string | null;
  columns: string[];
  /** Columns that `live` reads. */
  liveColumns: string[];
  /** SQL condition over the row alias (`new`, `old`, a table alias): the rows a search can return. */
  live: (row: string) => string;
}

export const COUNTED_SEARCHES: CountedSearch[] = [
  {
    source: 'accounts',
    table: 'accounts',
    scope: 'tenant_id',
    facet: null,
    columns: ['name_lc', 'domain_lc'],
    liveColumns: [],
    live: () => '1 = 1',
  },
  {
    source: 'page_links',
    table: 'page_links',
    scope: 'tenant_domain_id',
    facet: 'target_type',
    columns: ['path_lc'],
    liveColumns: ['deleted_at'],
    live: (row) => `${row}.deleted_at is null`,
  },
];

/** Characters as both databases count them (code points), so a JavaScript gram is a SQL one. */
const characters = (text: string) => Array.from(text);

/** A text short enough to be counted by its gram. */
export const countable = (text: string): boolean => characters(text).length <= GRAM_MAX;

/** The grams of a row's searched texts: '' and every distinct substring of 1 to GRAM_MAX characters. */
export function gramsOf(texts: string[]): Set<string> {
  const grams = new Set<string>(['']);
  for (const text of texts) {
    const chars = characters(text);
    for (let i = 0; i < chars.length; i++) {
      let gram = '';
      for (let n = 0; n < GRAM_MAX && i + n < chars.length; n++) {
        gram += chars[i + n];
        grams.add(gram);
      }
    }
  }
  return grams;
}

/**
 * How many live rows of `source` in `scopeId` (with one of `facets`) contain `text` (at most
 * GRAM_MAX characters), as an expression: a statement that reads a page can carry it (search.ts).
 */
export function gramCount(source: CountedSearch['source'], scopeId: string, facets: string[], text: string) {
  return sql<number | string | bigint | null>`(select sum(n) from search_counts
    where source = ${source} and scope_id = ${scopeId} and facet in (${sql.join(facets)}) and gram = ${text})`;
}

/** The same, read on its own. */
export async function countByGram(
  db: Kysely<Database>,
  source: CountedSearch['source'],
  scopeId: string,
  facets: string[],
  text: string,
): Promise<number> {
  const { rows } = await sql<{ n: number | string | bigint | null }>`select ${gramCount(source, scopeId, facets, text)} as n`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/** An FTS5 query for `text` as one phrase: a substring match, its own quotes doubled. */
export const ftsPhrase = (text: string): string => `"${text.replace(/"/g, '""')}"`;

/** The `scope_id` of the row counting every row of a table, live or not (SQLite: its FTS table's rows). */
export const WHOLE_TABLE = '*';

/**
 * How many live rows of `source` in `scopeId` (with one of `facets.asked`) contain `text`, without
 * visiting them; undefined when that cannot be known so. A short text: by its gram. A longer one,
 * on SQLite, when the scope's live rows are every row of the table (one tenant, nothing deleted:
 * the embedded default's usual case) and the search has no other filter: then every match in
 * the FTS table is one, and FTS5 counts them from its index alone.
 */
export async function countWithoutVisiting(
  db: Kysely<Database>,
  source: CountedSearch['source'],
  scopeId: string,
  facets: { asked: string[]; all: string[] },
  text: string,
): Promise<number | undefined> {
  if (countable(text)) return countByGram(db, source, scopeId, facets.asked, text);
  if (isPostgres(db) || facets.asked.length < facets.all.length) return undefined;
  const scope = await countByGram(db, source, scopeId, facets.all, '');
  const whole = await countByGram(db, source, WHOLE_TABLE, [''], '');
  if (scope !== whole) return undefined;
  const fts = sql.table(`${source}_fts`);
  const { rows } = await sql<{ n: number }>`select count(*) as n from ${fts} where ${fts} match ${ftsPhrase(text)}`.execute(db);
  return Number(rows[0]?.n ?? 0);
}
