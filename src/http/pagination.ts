import { sql, type RawBuilder } from 'kysely';
import { isIdShaped } from '../ids.js';
import { invalidField } from './errors.js';
import type { ListPage } from './schemas.js';

/**
 * Keyset pagination. A cursor is base64url(JSON) of `[list, filtersHash, ...sortKey]` where the
 * sort key is the last row's `(createdAt, id)` (or an endpoint's own key). The list name and the
 * hash of the filters make a cursor from another list, or from other filters, a 400.
 */
export type SortKey = readonly (string | number)[];

export interface PageRequest {
  limit: number;
  /** Sort key of the last row already seen; null on the first page. */
  after: SortKey | null;
}

/** What each part of a sort key must be: nothing else may reach a query from a cursor. */
export type KeyKind = 'timestamp' | 'id' | 'integer';
const KEY_CHECKS: Record<KeyKind, (v: unknown) => boolean> = {
  timestamp: (v) => typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(v) && !Number.isNaN(Date.parse(v)),
  id: (v) => typeof v === 'string' && isIdShaped(v),
  integer: (v) => Number.isSafeInteger(v),
};

/** The default order of every list: newest first, ties broken by id. */
export const NEWEST_FIRST: readonly KeyKind[] = ['timestamp', 'id'];

export function pageRequest(
  list: string,
  filters: unknown,
  query: { cursor?: string; limit?: number },
  kinds: readonly KeyKind[] = NEWEST_FIRST,
): PageRequest {
  const limit = query.limit ?? 20;
  if (query.cursor === undefined) return { limit, after: null };
  return { limit, after: decodeCursor(list, filters, query.cursor, kinds) };
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

/** Rows after `after` in ascending order: `(column, id) > (?, ?)`, for lists ordered by a position. */
export function laterThan(table: string, after: SortKey, column: string): RawBuilder<boolean> {
  return sql<boolean>`(${sql.ref(`${table}.${column}`)}, ${sql.ref(`${table}.id`)}) > (${after[0]}, ${after[1]})`;
}

/** Rows after `after` in newest-first order: `(column, id) < (?, ?)`, which the list index serves. */
export function olderThan(table: string, after: SortKey, column = 'created_at'): RawBuilder<boolean> {
  return sql<boolean>`(${sql.ref(`${table}.${column}`)}, ${sql.ref(`${table}.id`)}) < (${after[0]}, ${after[1]})`;
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

/**
 * Rows were fetched with `limit + 1`: the extra row only tells that more exist.
 * `keyOf` gives a row's sort key, which becomes the next cursor.
 */
export function toPage<Row, Item>(
  list: string,
  filters: unknown,
  page: PageRequest,
  rows: Row[],
  totalCount: number,
  keyOf: (row: Row) => SortKey,
  map: (row: Row) => Item,
): ListPage<Item> {
  const hasMore = rows.length > page.limit;
  const kept = hasMore ? rows.slice(0, page.limit) : rows;
  const last = kept[kept.length - 1];
  return {
    items: kept.map(map),
    hasMore,
    nextCursor: hasMore && last !== undefined ? encodeCursor(list, filters, keyOf(last)) : null,
    totalCount,
  };
}
