import { expressionBuilder, sql, type Expression, type ExpressionBuilder, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import { isPostgres } from './adapter.js';
import type { Database } from './types.js';

/**
 * Work shared by every instance on one database is claimed with a lease: a row is taken by a
 * conditional `UPDATE ... RETURNING` that sets when its lease ends, and only where no lease is
 * running, so of several claimers exactly one wins each row, on SQLite and PostgreSQL alike
 * (no `SKIP LOCKED`, which SQLite lacks). A holder that dies leaves a lease that simply ends; the
 * row is then claimed again, so the work it stands for is done at least once (not exactly once).
 * The lease's end doubles as the holder's token: the outcome is written only while it is unchanged.
 *
 * The statements are written once here for any table, so they are plain SQL around the typed
 * pieces the caller gives (its condition and its order).
 */

/** A table whose rows can be leased: its rows have a string `id`. */
type Leasable = { [T in keyof Database]: Database[T] extends { id: string } ? T : never }[keyof Database];

/** A nullable text column of `T`: where the row's lease end is kept (null or past: free). */
type LeaseColumn<T extends Leasable> = {
  [C in keyof Database[T]]: null extends Database[T][C] ? (Database[T][C] extends string | null ? C : never) : never;
}[keyof Database[T]] &
  string;

type Column<T extends Leasable> = keyof Database[T] & string;
type Order<T extends Leasable> = Column<T> | Expression<unknown>;

/**
 * Turns across a column's values (a tenant's, say), in `within`'s order inside each: the k-th row
 * of one value waits behind every other value's (k-1)-th. A claim reads each value's first `limit`
 * due rows only, not the whole queue; the values are found one by one (`min(across) > last`), so
 * an index that leads with `across`, `within` after it, and whose condition `due` implies, serves it.
 */
export interface Turns<T extends Leasable> {
  across: Column<T>;
  within: readonly Column<T>[];
}

export interface Claim<T extends Leasable, R extends Column<T> = Column<T>> {
  table: T;
  lease: LeaseColumn<T>;
  /** The rows waiting for this work, lease aside. Checked again as each row is taken. */
  due: (eb: ExpressionBuilder<Database, T>) => Expression<SqlBool>;
  /** Which of the due rows go first: a column, or any expression over the row, or several (ties go to the next); or turns. */
  orderBy: Order<T> | readonly Order<T>[] | Turns<T>;
  limit: number;
  /** The time of the claim; a lease that ended before it is free. */
  now: string;
  /** When the new leases end: beyond the longest the work may take, so a live holder keeps them. */
  until: string;
  /** The columns to return of each claimed row; all of them when omitted. */
  returning?: readonly R[];
}

/** Up to `limit` due rows that nobody holds, now held until `until`; the rows another claimer won are not among them. */
export async function claimLeases<T extends Leasable, R extends Column<T> = Column<T>>(
  db: Kysely<Database>,
  claim: Claim<T, R>,
): Promise<Pick<Database[T], R>[]> {
  if (claim.limit <= 0) return [];
  const table = sql.table(claim.table);
  const lease = sql.ref(claim.lease);
  const due = claim.due(expressionBuilder<Database, T>());
  const free = sql`(${lease} is null or ${lease} < ${claim.now})`;
  const returning = claim.returning ? sql.join(claim.returning.map((column) => sql.ref(column))) : sql`*`;
  const candidates = isTurns(claim.orderBy)
    ? inTurns(isPostgres(db), table, claim.orderBy, due, free, claim.limit)
    : sql`select id from ${table} where ${due} and ${free} order by ${orderOf(claim.orderBy)} limit ${claim.limit}`;
  // The condition again outside the subquery: a row changed since the subquery read it is left alone.
  const { rows } = await sql<Pick<Database[T], R>>`update ${table} set ${lease} = ${claim.until}
    where ${due} and ${free}
    and id in (${candidates})
    returning ${returning}`.execute(db);
  return rows;
}

const isTurns = <T extends Leasable>(order: Claim<T>['orderBy']): order is Turns<T> =>
  typeof order === 'object' && order !== null && 'across' in order;

function orderOf<T extends Leasable>(orderBy: Order<T> | readonly Order<T>[]) {
  const orders = Array.isArray(orderBy) ? (orderBy as readonly Order<T>[]) : [orderBy as Order<T>];
  return sql.join(orders.map((o) => (typeof o === 'string' ? sql.ref(o) : o)));
}

/**
 * The ids of up to `limit` due free rows in turns (see Turns): each value of `across`, found by
 * an index seek from the last, gives its first `limit` rows, and those are ranked. The same rows as
 * a rank over every due row (`row_number() over (partition by across ...)`), which read the whole
 * queue on every claim: no row ranked past `limit` in its own value can be among the first `limit`.
 *
 * Each value's rows are read in a form of each dialect's. SQLite runs `c.id in (a subquery of the
 * value)` as one seek per value, and has no LATERAL. PostgreSQL cannot pull that subquery (it has a
 * limit) into the join: it scanned the whole table and ran the subquery once per row, 1.5–2.5 s a
 * claim at small scale. A lateral subquery reads the same rows by the seeks.
 */
function inTurns<T extends Leasable>(
  postgres: boolean,
  table: RawBuilder<unknown>,
  turns: Turns<T>,
  due: Expression<SqlBool>,
  free: RawBuilder<unknown>,
  limit: number,
) {
  const across = sql.ref(turns.across);
  const within = sql.join(turns.within.map((c) => sql.ref(c)));
  // Each ordering column once, beside the id (which may be one of them).
  const columns = ['id', ...turns.within.filter((c) => c !== 'id')];
  const ranked = sql.join(columns.map((c) => sql`${sql.ref(`c.${c}`)} as ${sql.ref(c)}`));
  const withinC = sql.join(turns.within.map((c) => sql.ref(`c.${c}`)));
  const firstOfValue = (value: RawBuilder<unknown>, selected: RawBuilder<unknown>) =>
    sql`select ${selected} from ${table} where ${across} = ${value} and ${due} and ${free} order by ${within} limit ${limit}`;
  const values = sql`with recursive claim_values (v) as (
      select min(${across}) from ${table} where ${due}
      union all
      select (select min(${across}) from ${table} where ${due} and ${across} > claim_values.v) from claim_values where claim_values.v is not null
    )`;
  const rows = postgres
    ? sql`claim_values g cross join lateral (${firstOfValue(sql.ref('g.v'), sql.join(columns.map((c) => sql.ref(c))))}) c`
    : sql`claim_values g join ${table} c on c.id in (${firstOfValue(sql.ref('g.v'), sql`id`)})`;
  return sql`${values}
    select id from (
      select ${ranked}, row_number() over (partition by g.v order by ${withinC}) as claim_turn
      from ${rows}
      where g.v is not null
    ) turned order by claim_turn, ${within} limit ${limit}`;
}

export interface Held<T extends Leasable> {
  table: T;
  lease: LeaseColumn<T>;
  id: string;
  /** The lease end the claim returned: the holder's token. */
  until: string;
}

/** A column's new value, or an expression over the row as it is (`sql`), which may read the column itself. */
export type LeaseChanges<T extends Leasable> = { [C in keyof Database[T]]?: Database[T][C] | RawBuilder<Database[T][C]> };

/**
 * Writes `changes` and frees the row, only if the lease is still the caller's; false when it is
 * not (it ran out and the row was claimed again: the work has moved on, and this outcome is dropped).
 * With no changes, the row is simply given back for a later claim.
 */
export async function releaseLease<T extends Leasable>(
  db: Kysely<Database>,
  held: Held<T>,
  changes: LeaseChanges<T> = {},
): Promise<boolean> {
  const lease = sql.ref(held.lease);
  const assignments = Object.entries(changes)
    .filter(([column, value]) => value !== undefined && column !== held.lease)
    .map(([column, value]) => sql`${sql.ref(column)} = ${value}`);
  const result = await sql`update ${sql.table(held.table)} set ${sql.join([...assignments, sql`${lease} = null`])}
    where id = ${held.id} and ${lease} = ${held.until}`.execute(db);
  return Number(result.numAffectedRows ?? 0n) > 0;
}
