import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { planOnce } from '../plan-once.js';
import type { Database } from '../types.js';
import { countable, countByGram, WHOLE_TABLE, type CountedTable } from './counts.js';
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
 * SQLite's substring search: an FTS5 trigram table `<table>_fts` per searched table (migrations
 * 0001–0003), asked for the text as one phrase. When a scope's rows sort by (created_at, id)
 * exactly as by rowid, the FTS table hands a page's matches over in the list's order (ORDERED):
 * no match beyond the page is read. Otherwise the count decides how the page is read (`planFor`).
 */

/**
 * How a page is read. `ordered`: the FTS matches, joined as `fts`, in their row order. Otherwise
 * `driven`: the FTS matches drive the query; `substringIndex`: matches come from the FTS table at
 * all (else `LIKE` tests the rows of the list index).
 */
interface Plan {
  ordered: boolean;
  driven: boolean;
  substringIndex: boolean;
}
const DRIVEN: Plan = { ordered: false, driven: true, substringIndex: true };
const ORDERED: Plan = { ordered: true, driven: false, substringIndex: true };
const UNDRIVEN: Plan = { ordered: false, driven: false, substringIndex: true };

/**
 * A page of matches of a scope out of order, by how many there are: up to 300, by looking each match
 * up; beyond, by walking the list index in order, testing rows against the FTS matches (which must
 * all be read first); and from 3,000 on, by testing each row with LIKE instead, since a page fills
 * after a few rows when matches are that common, while reading every FTS match costs as much as
 * counting them again.
 */
const DRIVE_UP_TO = 300;
const LIKE_FROM = 3000;
const planFor = (total: number): Plan =>
  total <= DRIVE_UP_TO ? DRIVEN : { ordered: false, driven: false, substringIndex: total < LIKE_FROM };

/** An FTS5 query for `text` as one phrase: a substring match, its own quotes doubled. */
const ftsPhrase = (text: string): string => `"${text.replace(/"/g, '""')}"`;

/**
 * Whether a scope's rows of `table` sort by (created_at, id) exactly as by rowid. Rows are written
 * with the time of their write and ids that grow, so they do, unless a clock stepped back or rows
 * were imported out of order: an insert trigger records that in `search_disorder` (migration 0014).
 */
async function inOrder(db: Kysely<Database>, table: SearchedTable, scopeId: string): Promise<boolean> {
  const found = await db
    .selectFrom('search_disorder')
    .select('scope_id')
    .where('table_name', '=', table)
    .where('scope_id', '=', scopeId)
    .executeTakeFirst();
  return found === undefined;
}

/**
 * For `$call` (ORDERED): `table`'s rows matching `text` through its FTS table, joined as `fts`,
 * whose rowid orders the page. `atStart`: only rows where a column starts with the text (FTS5's
 * initial phrase, `^`).
 */
function joinFts(table: SearchedTable, text: string, atStart: boolean): QueryCall {
  const fts = `${table}_fts`;
  const phrase = `${atStart ? '^' : ''}${ftsPhrase(text)}`;
  return <DB, TB extends keyof DB, O>(qb: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O> =>
    // The join adds the `fts` alias only; every column the caller reads stays its own table's.
    qb.innerJoin(sql<{ rowid: number }>`${sql.table(fts)}`.as('fts'), (join) =>
      join.on(sql<boolean>`fts.rowid = ${sql.ref(`${table}.rowid`)} and ${sql.ref(`fts.${fts}`)} match ${phrase}`),
    ) as unknown as SelectQueryBuilder<DB, TB, O>;
}
const FTS_ORDER = sql`fts.rowid`;

/** Rows whose columns contain `text`, tested with LIKE, or asked of the FTS table when it can serve the text. */
function textMatch(table: SearchedTable, columns: readonly string[], text: string, useIndex: boolean): RawBuilder<boolean> {
  if (!indexable(text) || !useIndex) return anyContains(table, columns, text);
  const fts = sql.table(`${table}_fts`);
  return sql<boolean>`${sql.ref(`${table}.rowid`)} in (select rowid from ${fts} where ${fts} match ${ftsPhrase(text)})`;
}

/**
 * The search's rows as `plan` reads them. When the FTS matches drive (or come in order), the scope
 * column is written `+column`, so that SQLite does not walk the scope's index instead: with few
 * matches, testing a whole tenant's rows against them costs a hundred times more.
 */
function matching<T extends SearchedTable>(db: Kysely<Database>, search: SearchSpec<T>, plan: Plan, atStart = false): AnyRows {
  const { table, scope, columns, text } = search;
  const column = sql.ref(`${table}.${scope.column}`);
  const scoped = db
    .selectFrom(table as SearchedTable)
    .where(plan.driven || plan.ordered ? sql<boolean>`+${column} = ${scope.id}` : sql<boolean>`${column} = ${scope.id}`);
  const live = applyTo(scoped, search.where);
  const found = plan.ordered
    ? live.$call(joinFts(table, text, atStart))
    : text === ''
      ? live
      : live.where(textMatch(table, columns, text, plan.substringIndex));
  return applyTo(found, search.filter);
}

async function countAll(qb: AnyRows): Promise<number> {
  const { n } = await qb.select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
  return Number(n);
}

/**
 * How many live rows of the scope (with one of `facets.asked`) contain `text`, without visiting
 * them; undefined when that cannot be known so. A short text: by its gram. A longer one, when the
 * scope's live rows are every row of the table (one tenant, nothing deleted: the embedded default's
 * usual case) and the search has no other filter: then every FTS match is one, and FTS5 counts
 * them from its index alone.
 */
async function countWithoutVisiting(
  db: Kysely<Database>,
  source: CountedTable,
  scopeId: string,
  facets: { asked: string[]; all: string[] },
  text: string,
): Promise<number | undefined> {
  if (countable(text)) return countByGram(db, source, scopeId, facets.asked, text);
  if (facets.asked.length < facets.all.length) return undefined;
  const scope = await countByGram(db, source, scopeId, facets.all, '');
  const whole = await countByGram(db, source, WHOLE_TABLE, [''], '');
  if (scope !== whole) return undefined;
  const fts = sql.table(`${source}_fts`);
  const { rows } = await sql<{ n: number }>`select count(*) as n from ${fts} where ${fts} match ${ftsPhrase(text)}`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

const counted = (table: SearchedTable): CountedTable => {
  if (table === 'audiences') throw new Error('Audiences have no search counts');
  return table;
};

export const sqliteSearch: SearchDialect = {
  contains: (table, column, text) =>
    indexable(text)
      ? sql<boolean>`${sql.ref(`${table}.rowid`)} in (select rowid from ${sql.table(`${table}_fts`)} where ${sql.table(`${table}_fts`)} match ${ftsPhrase(text)})`
      : anyContains(table, [column], text),

  async newestFirst<T extends SearchedTable, Row>(db: Kysely<Database>, search: ListSearch<T, Row>): Promise<Found<Row>> {
    const { table, scope, text, counted: facets } = search;
    const [ordered, known] = await Promise.all([
      facets !== undefined && indexable(text) && inOrder(db, table, scope.id),
      facets ? countWithoutVisiting(db, counted(table), scope.id, facets, text) : undefined,
    ]);
    const rows = (plan: Plan) => {
      const order = search.order.newestFirst(plan.ordered ? FTS_ORDER : undefined);
      if (plan.ordered || !plan.substringIndex || !indexable(text)) {
        return selected(matching(db, search, plan), search.select)
          .$call(order)
          .execute() as Promise<Row[]>;
      }
      // Matches looked up by rowid are all sorted before the page is cut: the page's rowids are
      // found first, so that what the caller selects (a count a row) is worked out for its rows only.
      const page = matching(db, search, plan)
        .select(sql.ref(`${table}.rowid`).as('rowid'))
        .$call(order);
      const ofPage = db.selectFrom(table as SearchedTable).where(sql<boolean>`${sql.ref(`${table}.rowid`)} in (${page})`);
      return selected(ofPage, search.select).$call(order).execute() as Promise<Row[]>;
    };
    const total = (plan: Plan) => countAll(matching(db, search, plan));
    if (known !== undefined) {
      // Nothing matches: no page to read (a short text would be tested against every row to find that).
      if (known === 0) return { rows: [], totalCount: 0 };
      if (ordered) return { rows: await rows(ORDERED), totalCount: known };
      if (!indexable(text)) return { rows: await rows({ ...UNDRIVEN, substringIndex: false }), totalCount: known };
      return { rows: await rows(planFor(known)), totalCount: known };
    }
    if (ordered || !indexable(text)) {
      const [found, totalCount] = await Promise.all([rows(ordered ? ORDERED : UNDRIVEN), total(ordered ? DRIVEN : UNDRIVEN)]);
      return { rows: found, totalCount };
    }
    const totalCount = await total(DRIVEN);
    return { rows: await rows(planFor(totalCount)), totalCount };
  },

  async matches<T extends SearchedTable>(db: Kysely<Database>, search: SearchSpec<T>) {
    const { table, text } = search;
    const ordered = indexable(text) && (await inOrder(db, table, search.scope.id));
    const plan = { ordered, driven: indexable(text), substringIndex: true };
    return {
      read<Row>(atStart: boolean, take: number, shape: Shape<Row>, unordered = false) {
        return shape(matching(db, search, plan, atStart))
          .$if(!unordered && ordered, (q) => q.orderBy(FTS_ORDER, 'desc'))
          .$if(!unordered && !ordered, (q) => q.orderBy(sql.ref(`${table}.created_at`), 'desc').orderBy(sql.ref(`${table}.id`), 'desc'))
          .limit(take)
          .execute() as Promise<Row[]>;
      },
    };
  },

  nameRange: (db, column, from, below) =>
    sql<boolean>`(${sql.ref(column)} >= ${planOnce(db, from)} and ${sql.ref(column)} < ${planOnce(db, below)})`,

  // `+created_at`, so that SQLite keeps to the name index rather than walk the time index.
  byName: (table, take) => (qb) =>
    qb
      .orderBy(sql`+${sql.raw(`${table}.created_at`)}`, 'desc')
      .orderBy(sql.ref(`${table}.id`), 'desc')
      .limit(take),
};
