import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { planOnce } from '../plan-once.js';
import type { Database } from '../types.js';
import { startsWith } from './like.js';
import {
  applyTo,
  selected,
  type AnyRows,
  type Found,
  type RankedSearch,
  type SearchDialect,
  type SearchedTable,
  type Shape,
} from './types.js';

/** Up to this many prefix matches, they are read by name (the live rows' name indexes) and sorted. */
const FEW_PREFIX_MATCHES = 500;
/**
 * Beyond this many rows matching through another row, a page of them is found by walking the
 * rows newest first: about √(page × rows) of the scope's, where sorting and walking cost alike.
 */
const WALK_FROM = 1500;

/**
 * Prefix matches first, then the others, each newest first: read as two pages, each stopping at
 * the limit (the prefix matches, then the others when they do not fill it), so no match beyond the
 * page is read; `dialect` reads them in its index's order. The count stops at `countUpTo`. Rows
 * that match `through` another table are read the same way from it and merged in.
 */
export async function prefixFirst<T extends SearchedTable, Row>(
  db: Kysely<Database>,
  search: RankedSearch<T, Row>,
  dialect: SearchDialect,
): Promise<Found<Row, number | null>> {
  const { table, columns, text } = search;
  const through = text === '' ? undefined : search.through;
  const { limit } = search.page;
  const { countUpTo } = search.order.prefixFirst;
  const matches = await dialect.matches(db, search);
  const prefix = sql<boolean>`(${sql.join(
    [...columns.map((c) => startsWith(db, `${table}.${c}`, text)), ...(through?.starting ? [through.starting.condition] : [])],
    sql` or `,
  )})`;
  const select: Shape<Row> = (q) =>
    through
      ? (selected(q, search.select).select([
          sql.ref(`${table}.created_at`).as('search_created_at'),
          sql.ref(`${table}.id`).as('search_id'),
        ]) as unknown as SelectQueryBuilder<Database, SearchedTable, Row>)
      : selected(q, search.select);
  const page = (atStart: boolean, take: number) =>
    matches.read(atStart, take, (q) => select(q).where(atStart ? prefix : sql<boolean>`not ${prefix}`));
  const matchIds = async () =>
    (await matches.read(false, countUpTo + 1, (q) => q.select(`${table}.id`), true)) as unknown as { id: string }[];
  const readPage = async (): Promise<Ranked<Row>> => {
    const first = (await fewPrefixMatches(db, search, dialect, limit + 1, select)) ?? (await page(true, limit + 1));
    return first.length > limit || text === '' ? { first, rest: [] } : { first, rest: await page(false, limit + 1 - first.length) };
  };
  if (!through) {
    const [{ first, rest }, counted] = await Promise.all([readPage(), matchIds()]);
    return { rows: [...first, ...rest], totalCount: counted.length > countUpTo ? null : counted.length };
  }
  // The rows matching through the other row: their ids up to the count's bound, and beyond, how
  // many up to WALK_FROM. That says how the others are read: from the other rows when they are
  // few, else by a walk of `table`'s rows newest first, which soon fills the page. The prefix
  // matches through the other row are those of `starting`: the rows whose own text starts with
  // the search's are among `readPage`'s.
  const matchingThrough = through.rows(false) as unknown as AnyRows;
  const theirIds = (await matchingThrough
    .select(`${table}.id`)
    .limit(countUpTo + 1)
    .execute()) as unknown as { id: string }[];
  const walk = theirIds.length > countUpTo && (await countAtMost(db, matchingThrough, WALK_FROM)) > WALK_FROM;
  const newestOf = (rows: SelectQueryBuilder<Database, SearchedTable, Row>, take: number) =>
    rows
      .orderBy(sql.ref(`${table}.created_at`), 'desc')
      .orderBy(sql.ref(`${table}.id`), 'desc')
      .limit(take)
      .execute();
  const readOther = async (): Promise<Ranked<Row>> => {
    if (theirIds.length === 0) return { first: [], rest: [] };
    const { starting } = through;
    // The prefix matches are a part of the others: walked only when they too are many.
    const walkStarting =
      starting !== undefined && walk && (await countAtMost(db, starting.rows(false) as unknown as AnyRows, WALK_FROM)) > WALK_FROM;
    const first = starting ? await newestOf(select(starting.rows(walkStarting) as unknown as AnyRows), limit + 1) : [];
    if (first.length > limit) return { first, rest: [] };
    const others = select(through.rows(walk) as unknown as AnyRows).where(sql<boolean>`not ${prefix}`);
    return { first, rest: await newestOf(others, limit + 1 - first.length) };
  };
  const [own, theirs, ownIds] = await Promise.all([readPage(), readOther(), matchIds()]);
  const counted = new Set([...ownIds, ...theirIds].map((r) => r.id)).size;
  const rows = [...newestFirst([...own.first, ...theirs.first]), ...newestFirst([...own.rest, ...theirs.rest])].slice(0, limit + 1);
  return { rows, totalCount: counted > countUpTo ? null : counted };
}

/** A ranked page read in two parts: the prefix matches, then the others. */
interface Ranked<Row> {
  first: Row[];
  rest: Row[];
}

/** Rows read with their key (`search_created_at`, `search_id`), once each, newest first. */
function newestFirst<Row>(rows: Row[]): Row[] {
  type Keyed = { search_created_at: string; search_id: string };
  const once = new Map<string, Row>();
  for (const row of rows) once.set((row as Keyed).search_id, row);
  const key = (row: Row) => row as Keyed;
  return [...once.values()].sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    if (x.search_created_at !== y.search_created_at) return x.search_created_at < y.search_created_at ? 1 : -1;
    return x.search_id < y.search_id ? 1 : -1;
  });
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
  select: Shape<Row>,
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
  // The range's newest ids first, then what the caller selects for those only: a database computes
  // the selected columns of every row in the range before it sorts them.
  for (const range of nonEmpty) {
    const ids = inRange(range).select(`${table}.id`).$call(dialect.byName(table, take));
    const newest = db.selectFrom(table as SearchedTable).where(sql<boolean>`${sql.ref(`${table}.id`)} in (${ids})`);
    const rows = (await select(newest).select(`${table}.created_at`).execute()) as Keyed[];
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
