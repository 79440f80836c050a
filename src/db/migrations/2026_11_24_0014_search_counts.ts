import { sql, type Kysely } from 'kysely';
import { COUNTED_SEARCHES, gramsOf, WHOLE_TABLE, type CountedSearch } from './search-sources.js';
import { isPostgres } from '../adapter.js';
import { columnTypes, createSearchCounts, createSearchCountsSupport } from './dialect.js';

/**
 * Match counts of short search texts per gram (src/db/search-counts.ts), kept by triggers, and
 * filled here from the rows already stored.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { id } = columnTypes(db);
  await db.schema
    .createTable('search_counts')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('scope_id', id, (c) => c.notNull())
    .addColumn('facet', 'text', (c) => c.notNull())
    .addColumn('gram', 'text', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('search_counts_pk', ['source', 'scope_id', 'facet', 'gram'])
    .execute();
  await createSearchCountsSupport(db);
  for (const counted of COUNTED_SEARCHES) {
    await createSearchCounts(db, counted);
    await backfill(db, counted);
  }
  if (!isPostgres(db)) await createDisorderChecks(db);
}

/**
 * SQLite reads a search's page from the FTS table in rowid order when a scope's rows sort by
 * (created_at, id) as by rowid (src/db/search.ts, `inOrder`). A row inserted with a smaller key
 * than a row already there breaks that for its scope, which is recorded here for good. Links are
 * checked among live ones (a deleted link never returns to search); audiences among all of the
 * tenant's, since an archived one can come back.
 */
const ORDER_SCOPES = [
  { table: 'accounts', scope: 'tenant_id', live: '' },
  { table: 'page_links', scope: 'tenant_domain_id', live: 'and o.deleted_at is null' },
  { table: 'audiences', scope: 'tenant_id', live: '' },
] as const;

async function createDisorderChecks(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('search_disorder')
    .addColumn('table_name', 'text', (c) => c.notNull())
    .addColumn('scope_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('search_disorder_pk', ['table_name', 'scope_id'])
    .execute();
  // The check's index: audiences have none by tenant and time over all their rows.
  await db.schema.createIndex('audiences_tenant_created_idx').on('audiences').columns(['tenant_id', 'created_at', 'id']).execute();
  // Audience search reads few prefix matches by name (src/audiences/search.ts), among live audiences.
  for (const column of ['effective_name_lc', 'page_name_lc']) {
    await db.schema
      .createIndex(`audiences_${column}_idx`)
      .on('audiences')
      .columns(['tenant_id', column])
      .where(sql<boolean>`archived_at is null and page_deleted = 0`)
      .execute();
  }
  for (const { table, scope, live } of ORDER_SCOPES) {
    await sql
      .raw(`create trigger search_disorder_${table} after insert on ${table}
        when exists (select 1 from ${table} o where o.${scope} = new.${scope} ${live} and (o.created_at, o.id) > (new.created_at, new.id))
        begin insert or ignore into search_disorder (table_name, scope_id) values ('${table}', new.${scope}); end`)
      .execute(db);
    // Rows already stored: any row whose key is below the largest key of the rows before it.
    await sql
      .raw(`insert or ignore into search_disorder (table_name, scope_id)
        select distinct '${table}', scope from (
          select o.${scope} as scope, o.created_at || ' ' || o.id as k,
            max(o.created_at || ' ' || o.id) over (partition by o.${scope} order by o.rowid rows between unbounded preceding and 1 preceding) as before
          from ${table} o where 1 = 1 ${live}
        ) where before > k`)
      .execute(db);
  }
}

/** Counts the stored rows in batches, in JavaScript (the same grams the triggers make). */
async function backfill(db: Kysely<unknown>, counted: CountedSearch): Promise<void> {
  const counts = new Map<string, number>();
  const facet = counted.facet === null ? sql.lit('') : sql.ref(counted.facet);
  let after = '';
  for (;;) {
    const { rows } = await sql<Record<string, string>>`select id, ${sql.ref(counted.scope)} as scope, ${facet} as facet, ${sql.join(
      counted.columns.map((c) => sql.ref(c)),
    )}
      from ${sql.table(counted.table)} where ${sql.raw(counted.live(counted.table))} and id > ${after} order by id limit 2000`.execute(db);
    const last = rows.at(-1);
    if (last === undefined) break;
    for (const row of rows) {
      for (const gram of gramsOf(counted.columns.map((c) => row[c] ?? ''))) {
        const key = JSON.stringify([row.scope, row.facet, gram]);
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    }
    after = String(last.id);
  }
  const values = [...counts].map(([key, n]) => {
    const [scope, facetValue, gram] = JSON.parse(key) as [string, string, string];
    return sql`(${counted.source}, ${scope}, ${facetValue}, ${gram}, ${n})`;
  });
  if (!isPostgres(db)) {
    const { rows: all } = await sql<{ n: number }>`select count(*) as n from ${sql.table(counted.table)}`.execute(db);
    values.push(sql`(${counted.source}, ${WHOLE_TABLE}, '', '', ${Number(all[0]?.n ?? 0)})`);
  }
  for (let i = 0; i < values.length; i += 500) {
    await sql`insert into search_counts (source, scope_id, facet, gram, n) values ${sql.join(values.slice(i, i + 500))}`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const { table } of COUNTED_SEARCHES) {
    if (isPostgres(db)) {
      for (const suffix of ['ins', 'del', 'upd']) await sql.raw(`drop trigger search_counts_${table}_${suffix} on ${table}`).execute(db);
      await sql.raw(`drop function search_counts_${table}()`).execute(db);
    } else {
      for (const suffix of ['ai', 'ad', 'au']) await sql.raw(`drop trigger search_counts_${table}_${suffix}`).execute(db);
    }
  }
  if (isPostgres(db)) await sql`drop function search_grams(text[])`.execute(db);
  else {
    for (const { table } of ORDER_SCOPES) await sql.raw(`drop trigger search_disorder_${table}`).execute(db);
    await sql`drop index audiences_tenant_created_idx`.execute(db);
    await sql`drop index audiences_effective_name_lc_idx`.execute(db);
    await sql`drop index audiences_page_name_lc_idx`.execute(db);
    await db.schema.dropTable('search_disorder').execute();
    await db.schema.dropTable('search_positions').execute();
  }
  await db.schema.dropTable('search_counts').execute();
}
