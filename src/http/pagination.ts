import type { Static } from '@sinclair/typebox';
import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import type { Database } from '../db/types.js';
import { isIdShaped } from '../ids.js';
import { invalidField } from './errors.js';
import { type ListPage, type ListQuery, MAX_LIMIT_WITH_CONTENT } from './schemas.js';

/**
 * Keyset pagination. A list declares its sort key once (`keysetList`); the key gives the query its
 * `ORDER BY` and the row comparison that starts a page after a cursor, and gives each page its next
 * cursor from the last row, so the two cannot disagree. A cursor is base64url(JSON) of
 * `[list, filtersHash, ...sortKey]`: the list name and the hash of the filters make a cursor from
 * another list, or from other filters, a 400.
 */
export type SortKey = readonly (string | number)[];

/** What each part of a sort key must be: nothing else may reach a query from a cursor. */
export type KeyKind = 'timestamp' | 'id' | 'integer';
const KEY_CHECKS: Record<KeyKind, (v: unknown) => boolean> = {
  timestamp: (v) => typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(v) && !Number.isNaN(Date.parse(v)),
  id: (v) => typeof v === 'string' && isIdShaped(v),
  integer: (v) => Number.isSafeInteger(v),
};

export interface KeyColumn<C extends string> {
  readonly column: C;
  readonly kind: KeyKind;
}

/** The order of most lists: newest first, ties broken by id. */
export const NEWEST_FIRST = {
  key: [
    { column: 'created_at', kind: 'timestamp' },
    { column: 'id', kind: 'id' },
  ],
  direction: 'desc',
} as const;

export interface ListRequest {
  /** The list's name (with the id it is scoped to, if any): a cursor is bound to it and to the filters. */
  readonly list: string;
  readonly filters: unknown;
  readonly limit: number;
  /** Sort key of the last row already seen; null on the first page. */
  readonly after: SortKey | null;
}

/** `cursor` and `limit`, the query parameters every list has. */
export type ListQueryParams = Static<ReturnType<typeof ListQuery<Record<never, never>>>>;

/**
 * The query of a list of `ContentListQuery` settled: with `include=content` a limit above
 * MAX_LIMIT_WITH_CONTENT is a 400 at `/limit` naming the bound, and an absent one is that bound;
 * otherwise the usual default. Whether content is included is not bound to the cursor: a client
 * may walk the same list either way.
 */
export function contentListQuery<Q extends ListQueryParams & { include?: 'content' }>(query: Q): Q & { limit: number } {
  const withContent = query.include === 'content';
  if (withContent && query.limit !== undefined && query.limit > MAX_LIMIT_WITH_CONTENT) {
    throw invalidField(
      '/limit',
      `must be at most ${MAX_LIMIT_WITH_CONTENT} with include=content (each item carries up to 512 KB of content)`,
    );
  }
  return { ...query, limit: query.limit ?? (withContent ? MAX_LIMIT_WITH_CONTENT : 20) };
}

type Table = keyof Database & string;

/** A row that holds its sort key, from which its cursor is made. */
type KeyRow<C extends string> = Readonly<Record<C, string | number>>;

export interface KeysetListSpec<T extends Table, C extends keyof Database[T] & string> {
  /** What cursors are bound to; a list scoped to a parent adds the parent's id in `request`. */
  name: string;
  table: T;
  /** Columns of `table`, the last one unique (the id), so that the order is total. */
  key: readonly KeyColumn<C>[];
  direction: 'asc' | 'desc';
}

export interface ListBinding {
  /** The id of the parent a list is scoped to (a page's audiences): a cursor of another parent is a 400. */
  within?: string;
  filters?: unknown;
}

export function keysetList<T extends Table, C extends keyof Database[T] & string>(spec: KeysetListSpec<T, C>) {
  const { name, table, key, direction } = spec;
  const kinds = key.map((k) => k.kind);
  const columns = key.map((k) => sql.ref(`${table}.${k.column}`));
  // The list index serves the row comparison in the direction it walks.
  const beyond = sql.raw(direction === 'desc' ? '<' : '>');
  const sortKey = (row: KeyRow<C>): SortKey => key.map((k) => (k.kind === 'integer' ? Number(row[k.column]) : String(row[k.column])));

  /** The page asked for; a cursor that is not of this list (of this parent, with these filters) is a 400. */
  function request(query: ListQueryParams, binding: ListBinding = {}): ListRequest {
    const list = binding.within === undefined ? name : `${name}:${binding.within}`;
    const filters = binding.filters ?? null;
    const limit = query.limit ?? 20;
    const after = query.cursor === undefined ? null : decodeCursor(list, filters, query.cursor, kinds);
    return { list, filters, limit, after };
  }

  /**
   * For `$call`: the rows after the cursor, in the list's order, one more than the limit.
   * `sameOrder`: an expression the rows are known to sort by exactly as by the key (a search index's
   * row number), which the query orders by instead, so that the index can hand the rows over in order;
   * or a copy of the key's columns in a joined index (search postings), which the cursor is compared
   * with too.
   */
  function apply(request: ListRequest, sameOrder?: RawBuilder<unknown> | readonly RawBuilder<unknown>[]) {
    return <DB, TB extends keyof DB, O>(qb: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O> => {
      const after = request.after;
      const key = Array.isArray(sameOrder) ? sameOrder : columns;
      let q = after === null ? qb : qb.where(sql<boolean>`(${sql.join(key)}) ${beyond} (${sql.join(after)})`);
      if (sameOrder !== undefined && !Array.isArray(sameOrder)) q = q.orderBy(sameOrder as RawBuilder<unknown>, direction);
      else for (const column of key) q = q.orderBy(column, direction);
      return q.limit(request.limit + 1);
    };
  }

  /** The envelope of rows read through `apply`: the extra row only tells that more exist; the last kept row gives the cursor. */
  function toListPage<Row extends KeyRow<C>, Item>(page: {
    request: ListRequest;
    rows: readonly Row[];
    totalCount: number;
    map: (row: Row) => Item;
  }): ListPage<Item> {
    const { request, rows, totalCount, map } = page;
    const hasMore = rows.length > request.limit;
    const kept = hasMore ? rows.slice(0, request.limit) : rows;
    const last = kept[kept.length - 1];
    return {
      items: kept.map(map),
      hasMore,
      nextCursor: hasMore && last !== undefined ? encodeCursor(request.list, request.filters, sortKey(last)) : null,
      totalCount,
    };
  }

  /**
   * The usual list in one call: the cursor is checked first, then the page of `rows` and the total
   * are read at once. `count` is the same rows' query, to be counted, or reads the total from elsewhere.
   */
  async function read<DB, TB extends keyof DB, Row extends KeyRow<C>, Item>(
    options: ListBinding & {
      query: ListQueryParams;
      rows: SelectQueryBuilder<DB, TB, Row>;
      count: SelectQueryBuilder<DB, TB, object> | (() => Promise<number>);
      map: (row: Row) => Item;
    },
  ): Promise<ListPage<Item>> {
    const { query, within, filters, rows, count, map } = options;
    const listRequest = request(query, { within, filters });
    const [found, totalCount] = await Promise.all([
      rows.$call(apply(listRequest)).execute(),
      typeof count === 'function' ? count() : countRows(count),
    ]);
    return toListPage({ request: listRequest, rows: found, totalCount, map });
  }

  return { request, apply, toListPage, read };
}

/** How many rows `qb` selects: a list's `totalCount`. */
export async function countRows<DB, TB extends keyof DB>(qb: SelectQueryBuilder<DB, TB, object>): Promise<number> {
  // Kysely cannot name the selection of a builder generic in its tables; count(*) is all it holds.
  const { n } = await qb
    .select((eb) => eb.fn.countAll().as('n'))
    .$castTo<{ n: string | number | bigint }>()
    .executeTakeFirstOrThrow();
  return Number(n);
}

function decodeCursor(list: string, filters: unknown, cursor: string, kinds: readonly KeyKind[]): SortKey {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    decoded = undefined;
  }
  if (
    !Array.isArray(decoded) ||
    decoded.length !== kinds.length + 2 ||
    decoded[0] !== list ||
    decoded[1] !== hashFilters(filters) ||
    !kinds.every((kind, i) => KEY_CHECKS[kind](decoded[i + 2]))
  ) {
    throw invalidField('/cursor', 'is not a cursor of this list with these filters');
  }
  return decoded.slice(2) as SortKey;
}

export function encodeCursor(list: string, filters: unknown, key: SortKey): string {
  return Buffer.from(JSON.stringify([list, hashFilters(filters), ...key])).toString('base64url');
}

/** FNV-1a over the filters' JSON: not a secret, only a guard against mixing cursors up. */
function hashFilters(filters: unknown): string {
  const text = JSON.stringify(filters ?? null);
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(36);
}
