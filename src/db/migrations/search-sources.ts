/**
 * What migrations 0014 and 0015 index for substring search, frozen as they ran: the live search
 * code (src/db/search/) reads these tables but owns none of this, so changing it never changes
 * history. A later change of what is indexed is a new migration with its own definitions.
 */

/**
 * `search_counts` keeps, per scope (a tenant, a domain), facet (a filter value, or '') and gram,
 * how many live rows have that gram: a row whose searched columns contain a text of at most
 * `GRAM_MAX` characters contains it as one of its grams (its distinct substrings of 1 to `GRAM_MAX`
 * characters, and '' for "every row").
 */
export const GRAM_MAX = 3;

/** The `scope_id` of the row counting every row of a table, live or not (SQLite: its FTS table's rows). */
export const WHOLE_TABLE = '*';

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

/** The grams of a row's searched texts: '' and every distinct substring of 1 to GRAM_MAX characters (code points). */
export function gramsOf(texts: string[]): Set<string> {
  const grams = new Set<string>(['']);
  for (const text of texts) {
    const chars = Array.from(text);
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

/** What `search_postings` (PostgreSQL) holds per table: its live rows' trigrams, keyed in list order. */
export type PostedSearch = Pick<CountedSearch, 'scope' | 'columns' | 'liveColumns' | 'live'> & {
  table: 'accounts' | 'page_links' | 'audiences';
};

const counted = (table: CountedSearch['table']): PostedSearch => {
  const search = COUNTED_SEARCHES.find((s) => s.table === table);
  if (!search) throw new Error(`No counted search of ${table}`);
  return search;
};

export const POSTED_SEARCHES: PostedSearch[] = [
  counted('accounts'),
  counted('page_links'),
  {
    table: 'audiences',
    scope: 'tenant_id',
    columns: ['effective_name_lc', 'page_name_lc'],
    liveColumns: ['archived_at', 'page_deleted'],
    live: (row) => `${row}.archived_at is null and ${row}.page_deleted = 0`,
  },
];
