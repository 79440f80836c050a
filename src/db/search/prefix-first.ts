import { sql, type Kysely, type RawBuilder } from 'kysely';
import { planOnce } from '../plan-once.js';
import type { Database } from '../types.js';
import { startsWith } from './like.js';
import { applyTo, selected, type AnyRows, type Found, type RankedSearch, type SearchDialect, type SearchedTable } from './types.js';

/** Up to this many prefix matches, they are read by name (the live rows' name indexes) and sorted. */
const FEW_PREFIX_MATCHES = 500;

/**
 * Prefix matches first, then the others, each newest first: read as two pages, each stopping at
 * the limit (the prefix matches, then the others when they do not fill it), so no match beyond the
 * page is read; `dialect` reads them in its index's order. The count stops at `countUpTo`.
 */
export async function prefixFirst<T extends SearchedTable, Row>(
  db: Kysely<Database>,
  search: RankedSearch<T, Row>,
  dialect: SearchDialect,
): Promise<Found<Row, number | null>> {
  const { table, columns, text } = search;
  const { limit } = search.page;
  const { countUpTo } = search.order.prefixFirst;
  const matches = await dialect.matches(db, search);
  const prefix = sql<boolean>`(${sql.join(
    columns.map((c) => startsWith(db, `${table}.${c}`, text)),
    sql` or `,
  )})`;
  const page = (atStart: boolean, take: number) =>
    matches.read(atStart, take, (q) => selected(q, search.select).where(atStart ? prefix : sql<boolean>`not ${prefix}`));
  const countMatches = async () => (await matches.read(false, countUpTo + 1, (q) => q.select(`${table}.id`), true)).length;
  const readPage = async () => {
    const first = (await fewPrefixMatches(db, search, dialect, limit + 1)) ?? (await page(true, limit + 1));
    return first.length > limit || text === '' ? first : [...first, ...(await page(false, limit + 1 - first.length))];
  };
  const [rows, counted] = await Promise.all([readPage(), countMatches()]);
  return { rows, totalCount: counted > countUpTo ? null : counted };
}

/**
 * Few prefix matches are found faster by name than by walking the matches newest first: each
 * column's range of its name index (`dialect.byName`), then merged and sorted here. Undefined when
 * there are more than FEW_PREFIX_MATCHES, or the text has no range.
 */
async function fewPrefixMatches<T extends SearchedTable, Row>(
  db: Kysely<Database>,
  search: RankedSearch<T, Row>,
  dialect: SearchDialect,
  take: number,
): Promise<Row[] | undefined> {
  const { table, scope } = search;
  const ranges = prefixRanges(db, dialect, search);
  if (!ranges) return undefined;
  const inRange = (range: RawBuilder<boolean>) =>
    applyTo(
      db.selectFrom(table as SearchedTable).where(sql<boolean>`${sql.raw(`${table}.${scope.column}`)} = ${planOnce(db, scope.id)}`),
      search.where,
    ).where(range);
  let many = 0;
  const nonEmpty: RawBuilder<boolean>[] = [];
  for (const range of ranges) {
    const n = await countAtMost(db, inRange(range), FEW_PREFIX_MATCHES);
    many += n;
    if (n > 0) nonEmpty.push(range);
  }
  if (many > FEW_PREFIX_MATCHES) return undefined;
  type Keyed = Row & { id: string; created_at: string };
  const found = new Map<string, Keyed>();
  // A row in a name's range starts with the text (code-point order): it is a prefix match.
  for (const range of nonEmpty) {
    const rows = (await selected(inRange(range), search.select)
      .select(`${table}.created_at`)
      .$call(dialect.byName(table, take))
      .execute()) as Keyed[];
    for (const row of rows) found.set(row.id, row);
  }
  return [...found.values()]
    .sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1))
    .slice(0, take);
}

/**
 * "Starts with the text" as a range of each searched column's name index, in code-point order;
 * undefined for an empty text (or one ending in the last code point).
 */
function prefixRanges(db: Kysely<Database>, dialect: SearchDialect, search: { table: string; columns: readonly string[]; text: string }) {
  const { table, columns, text } = search;
  if (text === '') return undefined;
  const chars = Array.from(text);
  const last = chars.pop()?.codePointAt(0) ?? 0;
  if (last >= 0x10ffff) return undefined;
  const above = chars.join('') + String.fromCodePoint(last + 1 === 0xd800 ? 0xe000 : last + 1);
  return columns.map((column) => dialect.nameRange(db, `${table}.${column}`, text, above));
}

/** How many rows `matches` selects, reading at most `max + 1` of them. */
async function countAtMost(db: Kysely<Database>, matches: AnyRows, max: number): Promise<number> {
  const row = await db
    .selectFrom(
      matches
        .select(sql<number>`1`.as('one'))
        .limit(max + 1)
        .as('matches'),
    )
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
