import { sql, type Kysely, type RawBuilder } from 'kysely';
import { currentSchema, isPostgres } from '../adapter.js';
import { GRAM_MAX, WHOLE_TABLE, type CountedSearch } from './search-sources.js';

/**
 * The one place where migrations differ by dialect: column types.
 * - timestamps: timestamptz on PostgreSQL, ISO 8601 text on SQLite (which sorts as time does);
 * - ids: byte-order collation on PostgreSQL (SQLite's default), so keyset order is the same on both;
 * - bytes: bytea on PostgreSQL, blob on SQLite.
 * Everything else (text, integer, bigint, JSON as text, booleans as 0/1) is shared.
 */
export function columnTypes(db: Kysely<unknown>): {
  timestamp: 'timestamptz' | 'text';
  id: RawBuilder<unknown> | 'text';
  bytes: 'bytea' | 'blob';
} {
  return isPostgres(db)
    ? { timestamp: 'timestamptz', id: sql`text collate "C"`, bytes: 'bytea' }
    : { timestamp: 'text', id: 'text', bytes: 'blob' };
}

/**
 * A function of this schema by its name alone, on PostgreSQL: unqualified, `drop function f`
 * also sees the f of every schema behind this one on the search_path (another deployment's in
 * `public`), and is then "not unique".
 */
export async function ownFunction(db: Kysely<unknown>, name: string): Promise<RawBuilder<unknown>> {
  return sql.id(await currentSchema(db), name);
}

/**
 * An index that serves `LIKE '%text%'` on lowercased `columns` of `table`.
 * PostgreSQL: a pg_trgm GIN index per column. SQLite: an FTS5 trigram table `<table>_fts` over the
 * columns, kept in step with the table by triggers (see `src/db/search/` for the queries).
 */
export async function createSubstringIndex(db: Kysely<unknown>, table: string, columns: string[]): Promise<void> {
  if (isPostgres(db)) {
    await sql`create extension if not exists pg_trgm`.execute(db);
    for (const column of columns) {
      await sql`create index ${sql.id(`${table}_${column}_trgm`)} on ${sql.table(table)} using gin (${sql.ref(column)} gin_trgm_ops)`.execute(
        db,
      );
    }
    return;
  }
  const fts = `${table}_fts`;
  const cols = sql.join(columns.map((c) => sql.ref(c)));
  const newCols = sql.join(columns.map((c) => sql.ref(`new.${c}`)));
  const oldCols = sql.join(columns.map((c) => sql.ref(`old.${c}`)));
  await sql`create virtual table ${sql.table(fts)} using fts5(${cols}, content=${sql.lit(table)}, content_rowid='rowid', tokenize='trigram')`.execute(
    db,
  );
  await sql`create trigger ${sql.id(`${fts}_ai`)} after insert on ${sql.table(table)} begin
    insert into ${sql.table(fts)} (rowid, ${cols}) values (new.rowid, ${newCols}); end`.execute(db);
  await sql`create trigger ${sql.id(`${fts}_ad`)} after delete on ${sql.table(table)} begin
    insert into ${sql.table(fts)} (${sql.table(fts)}, rowid, ${cols}) values ('delete', old.rowid, ${oldCols}); end`.execute(db);
  await sql`create trigger ${sql.id(`${fts}_au`)} after update on ${sql.table(table)} begin
    insert into ${sql.table(fts)} (${sql.table(fts)}, rowid, ${cols}) values ('delete', old.rowid, ${oldCols});
    insert into ${sql.table(fts)} (rowid, ${cols}) values (new.rowid, ${newCols}); end`.execute(db);
}

/** SQLite's `substr` positions for grams: the longest searched text, lowercased, in characters. */
const LONGEST_TEXT = 4096;

/**
 * The `search_counts` of one counted search (search-sources.ts), kept by triggers in the
 * writing transaction. SQLite: row triggers, grams made by joining a table of positions. PostgreSQL:
 * statement triggers over the transition tables, one upsert per statement in (scope, facet, gram)
 * order, so concurrent writers lock the shared count rows in one order and never deadlock.
 */
export async function createSearchCounts(db: Kysely<unknown>, counted: CountedSearch): Promise<void> {
  const { source, table, scope, columns } = counted;
  const facet = (row: string) => (counted.facet === null ? `''` : `${row}.${counted.facet}`);
  const watched = [...new Set([scope, ...columns, ...(counted.facet ? [counted.facet] : []), ...counted.liveColumns])];
  const upsert = `insert into search_counts (source, scope_id, facet, gram, n)`;
  const onConflict = `on conflict (source, scope_id, facet, gram) do update set n = search_counts.n + excluded.n`;
  if (isPostgres(db)) {
    const texts = (row: string) => `array[${columns.map((c) => `${row}.${c}`).join(', ')}]`;
    const grams = (rows: string, sign: string) => `${upsert}
      select '${source}', r.${scope}, ${facet('r')}, g.gram, ${sign}count(*)
      from ${rows} r, search_grams(${texts('r')}) g where ${counted.live('r')}
      group by 2, 3, 4 order by 2, 3, 4 ${onConflict};`;
    const changed = `(${watched.map((c) => `r.${c}`).join(', ')}, ${counted.live('r')}) is distinct from (${watched.map((c) => `o.${c}`).join(', ')}, ${counted.live('o')})`;
    const fn = `search_counts_${table}`;
    await sql
      // Planned for a thousand grams a row, each statement would be compiled by JIT first, which
      // costs a hundred times the statement.
      .raw(`create function ${fn}() returns trigger language plpgsql set jit = off as $$
      begin
        if tg_op = 'INSERT' then ${grams('new_rows', '')}
        elsif tg_op = 'DELETE' then ${grams('old_rows', '-')}
        else
          ${upsert}
          select '${source}', d.scope_id, d.facet, g.gram, sum(d.sign)
          from (
            select r.${scope} as scope_id, ${facet('r')} as facet, ${texts('r')} as texts, 1 as sign
            from new_rows r join old_rows o on o.id = r.id where ${counted.live('r')} and ${changed}
            union all
            select o.${scope}, ${facet('o')}, ${texts('o')}, -1
            from new_rows r join old_rows o on o.id = r.id where ${counted.live('o')} and ${changed}
          ) d, search_grams(d.texts) g
          group by 2, 3, 4 having sum(d.sign) <> 0 order by 2, 3, 4 ${onConflict};
        end if;
        return null;
      end $$`)
      .execute(db);
    await sql
      .raw(
        `create trigger ${fn}_ins after insert on ${table} referencing new table as new_rows for each statement execute function ${fn}()`,
      )
      .execute(db);
    await sql
      .raw(
        `create trigger ${fn}_del after delete on ${table} referencing old table as old_rows for each statement execute function ${fn}()`,
      )
      .execute(db);
    await sql
      .raw(
        `create trigger ${fn}_upd after update on ${table} referencing old table as old_rows new table as new_rows for each statement execute function ${fn}()`,
      )
      .execute(db);
    return;
  }
  const grams = (row: string) =>
    [
      `select '' as gram`,
      ...columns.map(
        (c) =>
          `select substr(${row}.${c}, p.i, l.i) from search_positions p, search_positions l where l.i <= ${GRAM_MAX} and p.i <= length(${row}.${c}) - l.i + 1`,
      ),
    ].join(' union ');
  const key = (row: string) => `source = '${source}' and scope_id = ${row}.${scope} and facet = ${facet(row)}`;
  const add = `${upsert} select '${source}', new.${scope}, ${facet('new')}, gram, 1 from (${grams('new')}) where ${counted.live('new')} ${onConflict};`;
  const remove = `update search_counts set n = n - 1 where ${counted.live('old')} and ${key('old')} and gram in (${grams('old')});`;
  const changed = [...watched.map((c) => `old.${c} is not new.${c}`), `(${counted.live('old')}) is not (${counted.live('new')})`].join(
    ' or ',
  );
  // Every row, live or not, as its FTS table holds them (search-sources.ts, WHOLE_TABLE).
  const whole = (by: string) => `${upsert} values ('${source}', '${WHOLE_TABLE}', '', '', ${by}) ${onConflict.replace('excluded.n', by)};`;
  const trigger = `search_counts_${table}`;
  await sql.raw(`create trigger ${trigger}_ai after insert on ${table} begin ${add} ${whole('1')} end`).execute(db);
  await sql.raw(`create trigger ${trigger}_ad after delete on ${table} begin ${remove} ${whole('-1')} end`).execute(db);
  await sql
    .raw(`create trigger ${trigger}_au after update of ${watched.join(', ')} on ${table} when ${changed} begin ${remove} ${add} end`)
    .execute(db);
}

/** What `createSearchCounts` needs once per database. */
export async function createSearchCountsSupport(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    await sql
      .raw(`create function search_grams(texts text[]) returns table (gram text) language sql immutable parallel safe as $$
        select '' union
        select substr(t, i, n) from unnest(texts) as t, generate_series(1, ${GRAM_MAX}) as n, generate_series(1, char_length(t) - n + 1) as i
      $$`)
      .execute(db);
    return;
  }
  await sql`create table search_positions (i integer primary key)`.execute(db);
  await sql`with recursive s(i) as (select 1 union all select i + 1 from s where i < ${sql.lit(LONGEST_TEXT)})
    insert into search_positions (i) select i from s`.execute(db);
}
