import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { Database } from '../types.js';
import { countable, countByGram, gramCount, type CountedTable } from './counts.js';
import { anyContains, indexable } from './like.js';
import {
  applyTo,
  selected,
  type AnyRows,
  type Found,
  type ListSearch,
  type QueryCall,
  type SearchDialect,
  type SearchedTable,
  type SearchSpec,
  type Shape,
} from './types.js';

/**
 * PostgreSQL's substring search: pg_trgm GIN indexes serve `LIKE '%text%'`, but not in time
 * order. `search_postings` (migration 0015) holds, per scope and trigram, the live rows that
 * contain it, keyed by the list's order (created_at, id): a page walks one trigram's postings newest
 * first, tests each row with LIKE and stops at the limit. For a text of three characters every
 * posting is a match; a longer one walks its rarest trigram.
 */

/** The distinct trigrams of a text, in code points, as the database's `search_trigrams` makes them. */
export function trigramsOf(text: string): string[] {
  const chars = Array.from(text);
  const grams = new Set<string>();
  for (let i = 0; i + 3 <= chars.length; i++) grams.add(chars.slice(i, i + 3).join(''));
  return [...grams];
}

/** Postings counted per trigram to pick the rarest; beyond this many, a trigram is "common". */
const PROBE = 500;
/** Trigrams probed at most, spread over a long text (a 2,048-character path has 2,046). */
const PROBED_GRAMS = 12;

/**
 * The trigram of `text` (three characters or more) with the fewest postings in the scope, each
 * counted up to PROBE: the shortest walk to a page. One statement, a few hundred index entries.
 */
async function rarestTrigram(db: Kysely<Database>, table: SearchedTable, scopeId: string, text: string): Promise<string> {
  const all = trigramsOf(text);
  if (all.length <= 1) return all[0] ?? text;
  // Any trigram of the text finds every match; the rarest of a few is short enough a walk.
  const grams =
    all.length <= PROBED_GRAMS
      ? all
      : Array.from({ length: PROBED_GRAMS }, (_, i) => all[Math.floor((i * all.length) / PROBED_GRAMS)] ?? '');
  const { rows } = await sql<{ gram: string }>`select g.gram from unnest(${grams}::text[]) as g(gram)
    order by (select count(*) from (select 1 from search_postings p
      where p.source = ${table} and p.scope_id = ${scopeId} and p.gram = g.gram limit ${PROBE}) as found), g.gram
    limit 1`.execute(db);
  return rows[0]?.gram ?? grams[0] ?? text;
}

/** Where a walk of postings is: the trigram, how many postings it reads, and the list's cursor. */
interface Walk {
  gram: string;
  chunk: number;
  /** The sort key (created_at, id) of the last row of the page before, if any. */
  after: readonly (string | number)[] | null;
}

/** The next `chunk` postings of the walk, newest first (every list searched this way is newest first). */
const postings = (table: SearchedTable, scopeId: string, walk: Walk) =>
  sql`select row_id, created_at from search_postings
    where source = ${table} and scope_id = ${scopeId} and gram = ${walk.gram}
    ${walk.after ? sql`and (created_at, row_id) < (${walk.after[0]}, ${walk.after[1]})` : sql``}
    order by created_at desc, row_id desc`;

/**
 * For `$call`: `table`'s rows in `scopeId` among the walk's next postings, joined as `p`, whose
 * (created_at, row_id) copy the list's key (`POSTING_KEY`). The postings are read first, at most
 * `chunk` of them, and only then joined: left to itself, the planner would rather hash every
 * posting of a common trigram than stop after a page. The caller still tests the whole text.
 */
function joinPostings(table: SearchedTable, scopeId: string, walk: Walk): QueryCall {
  return <DB, TB extends keyof DB, O>(qb: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O> =>
    // The join adds the `p` alias only; every column the caller reads stays its own table's.
    qb.innerJoin(sql<{ row_id: string }>`(${postings(table, scopeId, walk)} limit ${walk.chunk})`.as('p'), (join) =>
      join.on(sql<boolean>`p.row_id = ${sql.ref(`${table}.id`)}`),
    ) as unknown as SelectQueryBuilder<DB, TB, O>;
}

/** The list key's copy in the postings: a page is ordered, and its cursor compared, by these. */
const POSTING_KEY = [sql.ref('p.created_at'), sql.ref('p.row_id')] as const;

/**
 * Reads `want` rows through postings: `read` reads among the next `chunk` postings; while it finds
 * fewer than `want` and more postings follow, the chunk grows fourfold (and is read again from its
 * start). For a text of three characters every posting matches (unless a filter the postings do not
 * keep, a link's target type, leaves some out), so the first chunk (`want`) is the page; a longer
 * text's rarest trigram mostly matches too. All chunks together read at most 4/3 of the last one,
 * which is at most four times the postings the page needed.
 */
async function walkPostings<R>(
  db: Kysely<Database>,
  table: SearchedTable,
  scopeId: string,
  walk: Omit<Walk, 'chunk'>,
  want: number,
  read: (walk: Walk) => Promise<R[]>,
): Promise<R[]> {
  for (let chunk = Math.max(want, 1); ; chunk *= 4) {
    const rows = await read({ ...walk, chunk });
    if (rows.length >= want) return rows;
    const { rows: beyond } = await sql`${postings(table, scopeId, { ...walk, chunk })} offset ${chunk} limit 1`.execute(db);
    if (beyond.length === 0) return rows;
  }
}

/** The search's rows, among the walk's postings if any, tested with LIKE. PostgreSQL's planner weighs the scope's index on its own. */
function matching<T extends SearchedTable>(db: Kysely<Database>, search: SearchSpec<T>, walk: Walk | undefined): AnyRows {
  const { table, scope, columns, text } = search;
  const scoped = db.selectFrom(table as SearchedTable).where(sql<boolean>`${sql.ref(`${table}.${scope.column}`)} = ${scope.id}`);
  const live = applyTo(scoped, search.where);
  const walked = walk ? live.$call(joinPostings(table, scope.id, walk)) : live;
  return applyTo(text === '' ? walked : walked.where(anyContains(table, columns, text)), search.filter);
}

async function countAll(qb: AnyRows): Promise<number> {
  const { n } = await qb.select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
  return Number(n);
}

const counted = (table: SearchedTable): CountedTable => {
  if (table === 'audiences') throw new Error('Audiences have no search counts');
  return table;
};

export const postgresSearch: SearchDialect = {
  // The column's trigram index serves LIKE itself.
  contains: (table, column, text) => anyContains(table, [column], text),

  /**
   * A text of three characters or more is read from its rarest trigram's postings. One of three
   * characters carries its count (by gram) in the page's statement: one round trip instead of two.
   * One of fewer has its count by gram, read first: nothing to read when it is 0.
   */
  async newestFirst<T extends SearchedTable, Row>(db: Kysely<Database>, search: ListSearch<T, Row>): Promise<Found<Row>> {
    const { table, scope, text, page, counted: facets } = search;
    const source = facets && counted(table);
    const carried = source && indexable(text) && countable(text) ? gramCount(source, scope.id, facets.asked, text) : undefined;
    const [known, gram] = await Promise.all([
      source && !carried && countable(text) ? countByGram(db, source, scope.id, facets.asked, text) : undefined,
      source && indexable(text) ? rarestTrigram(db, table, scope.id, text) : undefined,
    ]);
    const rows = (walk?: Walk) =>
      selected(matching(db, search, walk), search.select)
        .$if(carried !== undefined, (q) => q.select(sql`${carried}`.as('search_total')))
        .$call(search.order.newestFirst(walk ? POSTING_KEY : undefined))
        .execute() as Promise<Row[]>;
    const walked = (gram: string) => walkPostings(db, table, scope.id, { gram, after: page.after }, page.limit + 1, rows);
    const total = () => countAll(matching(db, search, undefined));
    if (carried && source && gram !== undefined) {
      const found = await walked(gram);
      // An empty page carries no count: nothing matches, or the cursor is past the last match.
      const first = found[0];
      const totalCount =
        first === undefined
          ? await countByGram(db, source, scope.id, facets.asked, text)
          : Number(typeof first === 'object' && first !== null && 'search_total' in first ? first.search_total : 0);
      return { rows: found, totalCount };
    }
    if (known !== undefined) return known === 0 ? { rows: [], totalCount: 0 } : { rows: await rows(), totalCount: known };
    const [found, totalCount] = await Promise.all([gram === undefined ? rows() : walked(gram), total()]);
    return { rows: found, totalCount };
  },

  async matches<T extends SearchedTable>(db: Kysely<Database>, search: SearchSpec<T>) {
    const { table, text, scope } = search;
    const gram = indexable(text) ? await rarestTrigram(db, table, scope.id, text) : undefined;
    const read = <Row>(take: number, shape: Shape<Row>, unordered: boolean, walk?: Walk) =>
      shape(matching(db, search, walk))
        .$if(!unordered && walk !== undefined, (q) => q.orderBy(POSTING_KEY[0], 'desc').orderBy(POSTING_KEY[1], 'desc'))
        .$if(!unordered && walk === undefined, (q) =>
          q.orderBy(sql.ref(`${table}.created_at`), 'desc').orderBy(sql.ref(`${table}.id`), 'desc'),
        )
        .limit(take)
        .execute() as Promise<Row[]>;
    return {
      // As many postings of the rarest trigram as it takes (`walkPostings`); the prefix matches are
      // among them, so `atStart` narrows nothing here.
      read<Row>(_atStart: boolean, take: number, shape: Shape<Row>, unordered = false) {
        return gram === undefined
          ? read(take, shape, unordered)
          : walkPostings(db, table, scope.id, { gram, after: null }, take, (walk) => read(take, shape, unordered, walk));
      },
    };
  },

  nameRange: (_db, column, from, below) =>
    sql<boolean>`(${sql.ref(column)} collate "C" >= ${from} and ${sql.ref(column)} collate "C" < ${below})`,

  // All of them (few, by the caller's count): a sort could tempt the planner to the time index.
  byName: () => (qb) => qb,
};
