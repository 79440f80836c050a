import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import * as searchCountsMigration from '../../src/db/migrations/2026_11_24_0014_search_counts.js';
import * as searchPostingsMigration from '../../src/db/migrations/2026_11_24_0015_search_postings.js';
import * as pageNameOnceMigration from '../../src/db/migrations/2026_12_06_0068_page_name_once.js';
import * as pageNamesIndexMigration from '../../src/db/migrations/2026_12_12_0074_page_names_index.js';
import { gramsOf, POSTED_SEARCHES } from '../../src/db/migrations/search-sources.js';
import { trigramsOf } from '../../src/db/search/postgres.js';
import { COPY_BATCH } from '../../src/audiences/page-copies.js';
import { newId } from '../../src/ids.js';
import { ok, onPostgres, type Res, startApp, type Json, type TestApp } from '../helpers.js';

// Searches count short texts from per-gram counts kept by triggers, and SQLite reads pages from
// the FTS index in row order. These tests compare every answer with the same search done in
// JavaScript over what the test created, through writes of every kind, on both databases.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const as = (key: string) => ({ key });
const contains = (values: string[], text: string) => values.some((v) => v.toLowerCase().includes(text));
/** Newest first, ties by id: the lists' order. */
const newestFirst = <T extends { createdAt: string; id: string }>(rows: T[]) =>
  [...rows].sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1));

/** Every page of a search, following nextCursor; checks totalCount on each. */
async function searchAll(key: string, url: string, expected: number): Promise<Json[]> {
  const items: Json[] = [];
  let cursor: string | undefined;
  do {
    const body = ok(await t.req('GET', `${url}&limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, undefined, as(key)));
    assert.equal(body.totalCount, expected, `${url}: totalCount`);
    items.push(...body.items);
    cursor = body.nextCursor ?? undefined;
  } while (cursor);
  return items;
}

// Texts of every length the counts serve (1 to 3 characters and '') and beyond, with LIKE's
// wildcards, a quote for FTS, and characters outside ASCII.
const TEXTS = ['', 'a', 'e', 'ac', 'me', 'acm', '.co', 'xyz', 'acme', 'globex co', '%', '_', '"', 'zoë', 'ë', 'çe', '0'];

describe('account search counts and orders', () => {
  let key: string;
  const accounts = new Map<string, { id: string; createdAt: string; name: string; domain: string }>();

  async function check(): Promise<void> {
    for (const text of TEXTS) {
      const expected = newestFirst(
        [...accounts.values()].filter((a) => contains([a.name, a.domain], text)).map((a) => ({ ...a, createdAt: a.createdAt })),
      );
      const found = await searchAll(key, `/v0/accounts/search?query=${encodeURIComponent(text)}`, expected.length);
      assert.deepEqual(
        found.map((a) => a.accountId),
        expected.map((a) => a.id),
        `query ${JSON.stringify(text)}`,
      );
    }
  }

  before(async () => {
    key = (await t.newTenant('Search counts')).key;
    const names = ['Acme Labs', 'Globex Corp', 'ACME 100% _real_', 'Zoë Çelik "quoted"', 'Initech', 'Acmeacme', 'Umbrella'];
    for (const [i, name] of names.entries()) {
      for (let copy = 0; copy < 3; copy++) {
        const body = ok(
          await t.req('POST', '/v0/accounts', { name: `${name} ${copy}`, domain: `${name.replace(/\W+/g, '')}-${i}-${copy}.co` }, as(key)),
          201,
        );
        accounts.set(body.accountId, {
          id: body.accountId,
          createdAt: body.createdAt,
          name: body.name,
          domain: body.domain,
        });
      }
    }
  });

  test('after creates', check);

  test('after renames, domain changes and deletes', async () => {
    const ids = [...accounts.keys()];
    for (const id of ids.slice(0, 4)) {
      const body = ok(await t.req('PATCH', `/v0/accounts/${id}`, { name: `Renamed ${id.slice(-4)} globex co` }, as(key)));
      accounts.set(id, { ...(accounts.get(id) as { id: string; createdAt: string; name: string; domain: string }), name: body.name });
    }
    for (const id of ids.slice(4, 7)) {
      const body = ok(await t.req('PATCH', `/v0/accounts/${id}`, { domain: `moved-${id.slice(-6)}.example` }, as(key)));
      accounts.set(id, {
        ...(accounts.get(id) as { id: string; createdAt: string; name: string; domain: string }),
        domain: body.domain,
      });
    }
    for (const id of ids.slice(7, 10)) {
      ok(await t.req('DELETE', `/v0/accounts/${id}`, undefined, as(key)), 204);
      accounts.delete(id);
    }
    await check();
  });

  test('another tenant counts only its own', async () => {
    const other = (await t.newTenant('Other search tenant')).key;
    ok(await t.req('POST', '/v0/accounts', { name: 'Acme elsewhere', domain: 'acme-elsewhere.co' }, as(other)), 201);
    const body = ok(await t.req('GET', '/v0/accounts/search?query=acm', undefined, as(other)));
    assert.equal(body.totalCount, 1);
    await check();
  });

  test('the counts are the grams of the stored rows', async () => {
    // What the triggers keep equals a recount from the rows (the migration's backfill does the same).
    const counts = new Map<string, number>();
    for (const a of accounts.values()) {
      for (const gram of gramsOf([a.name.toLowerCase(), a.domain.toLowerCase()])) counts.set(gram, (counts.get(gram) ?? 0) + 1);
    }
    const tenantId = (
      await t.app.db
        .selectFrom('accounts')
        .select('tenant_id')
        .where('id', '=', [...accounts.keys()][0] ?? '')
        .executeTakeFirstOrThrow()
    ).tenant_id;
    const stored = await t.app.db
      .selectFrom('search_counts')
      .select(['gram', 'n'])
      .where('source', '=', 'accounts')
      .where('scope_id', '=', tenantId)
      .where('n', '<>', 0)
      .execute();
    assert.deepEqual(new Map(stored.map((r) => [r.gram, Number(r.n)])), counts);
    // Each database keeps the counts with triggers of its own: both are checked. SQLite alone has
    // the row that counts the whole table (every tenant's), which lets a longer text be counted by FTS alone.
    if (onPostgres) return;
    const whole = await t.app.db
      .selectFrom('search_counts')
      .select('n')
      .where('source', '=', 'accounts')
      .where('scope_id', '=', '*')
      .executeTakeFirstOrThrow();
    const all = await t.app.db
      .selectFrom('accounts')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(whole.n), Number(all.n));
  });

  test('the migration fills the counts from the rows stored before it (down, then up again, gives the same answers)', async () => {
    const before = await t.app.db.selectFrom('search_counts').selectAll().orderBy(['source', 'scope_id', 'facet', 'gram']).execute();
    // The migration's own functions, in one transaction (the migrator's lock is shared by every test file on the server).
    await t.app.db.transaction().execute(async (trx) => {
      const db = trx as unknown as Kysely<unknown>;
      // Triggers deferred to commit (the site sequence) fire at once: pending ones refuse DDL (PostgreSQL).
      if (onPostgres) await sql`set constraints all immediate`.execute(trx);
      // 0068 took the page names out of the audiences, and 0074 indexes them in the pages: undone
      // first, latest first, made again after.
      await pageNamesIndexMigration.down(db);
      await pageNameOnceMigration.down(db);
      await searchCountsMigration.down(db);
      await searchCountsMigration.up(db);
      await pageNameOnceMigration.up(db);
      await pageNamesIndexMigration.up(db);
    });
    const after = await t.app.db.selectFrom('search_counts').selectAll().orderBy(['source', 'scope_id', 'facet', 'gram']).execute();
    // Triggers leave rows at zero where the backfill writes none.
    const nonZero = (rows: typeof before) => rows.filter((r) => Number(r.n) !== 0).map((r) => ({ ...r, n: Number(r.n) }));
    assert.deepEqual(nonZero(after), nonZero(before));
    await check();
  });

  test('a longer text is counted exactly whether or not the tenant holds every row', async () => {
    // This describe's tenant shares the table with others: FTS alone would count theirs too.
    const lone = await startApp();
    try {
      const body = ok(await lone.req('POST', '/v0/accounts', { name: 'Globex corporation', domain: 'globex-corp.co' }), 201);
      assert.ok(body.accountId);
      ok(await lone.req('POST', '/v0/accounts', { name: 'Other', domain: 'other.co' }), 201);
      for (const [text, n] of [
        ['globex c', 1],
        ['corporation', 1],
        ['.co', 2],
        ['nothing here', 0],
      ] as const) {
        assert.equal(ok(await lone.req('GET', `/v0/accounts/search?query=${encodeURIComponent(text)}`)).totalCount, n, text);
      }
    } finally {
      await lone.close();
    }
    await check();
  });
});

describe('counts under concurrent writers', () => {
  test('accounts created, renamed and deleted at once in one tenant: no deadlock, no count lost', async () => {
    const { key } = await t.newTenant('Concurrent counts');
    // Forty requests at once on a pool of four: on a busy machine a request may wait longer than
    // the service's 2.5 s for a connection and be told 503, retry shortly, as any client is. A
    // deadlock would be a 500, never retried here.
    const retried = async (send: () => Promise<Res>): Promise<Res> => {
      for (let attempt = 1; ; attempt++) {
        const res = await send();
        if (res.status !== 503 || attempt === 5) return res;
        await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      }
    };
    const names = Array.from({ length: 40 }, (_, i) => `Conc ${i % 5 === 0 ? 'acme' : 'globex'} ${i}`);
    const made = await Promise.all(
      names.map((name, i) =>
        retried(() => t.req('POST', '/v0/accounts', { name, domain: `conc-${i}.example` }, as(key))).then((res) => ok(res, 201)),
      ),
    );
    // Renames and deletes interleaved, each in its own transaction, sharing the tenant's count rows.
    await Promise.all(
      made.map((a: Json, i: number) =>
        i % 3 === 0
          ? retried(() => t.req('DELETE', `/v0/accounts/${a.accountId}`, undefined, as(key))).then((res) => ok(res, 204))
          : retried(() => t.req('PATCH', `/v0/accounts/${a.accountId}`, { name: `${a.name} acme renamed` }, as(key))).then((res) =>
              ok(res),
            ),
      ),
    );
    const left = made.filter((_: Json, i: number) => i % 3 !== 0).map((a: Json) => ({ name: `${a.name} acme renamed`, domain: a.domain }));
    for (const text of ['', 'acm', 'glo', 'ren', 'c', 'co', '.ex', 'conc']) {
      const expected = left.filter((a: { name: string; domain: string }) => contains([a.name, a.domain], text)).length;
      const body = ok(await t.req('GET', `/v0/accounts/search?query=${encodeURIComponent(text)}&limit=1`, undefined, as(key)));
      assert.equal(body.totalCount, expected, `query ${JSON.stringify(text)}`);
    }
  });
});

describe('page link search counts, with target types, through link, page and domain deletes', () => {
  let key: string;
  const links = new Map<string, { id: string; createdAt: string; path: string; type: string; domain: string; pageId: string }>();

  async function check(domainId: string): Promise<void> {
    for (const text of [...TEXTS, '/p', 'ro', 'rou']) {
      for (const type of [undefined, 'page', 'page_routing', 'audience']) {
        const expected = newestFirst(
          [...links.values()].filter((l) => l.domain === domainId && (type === undefined || l.type === type) && contains([l.path], text)),
        );
        const typed = type ? `&targetType=${type}` : '';
        const found = await searchAll(
          key,
          `/v0/page_links/search?tenantDomainId=${domainId}&query=${encodeURIComponent(text)}${typed}`,
          expected.length,
        );
        assert.deepEqual(
          found.map((l) => l.pageLinkId),
          expected.map((l) => l.id),
          `query ${JSON.stringify(text)} ${type ?? ''}`,
        );
      }
    }
  }

  let fallback: string;
  let custom: string;
  const pages: string[] = [];
  before(async () => {
    key = (await t.newTenant('Link counts')).key;
    fallback = ok(await t.req('GET', '/v0/tenant_domains', undefined, as(key))).items.find((d: Json) => d.isFallback).tenantDomainId;
    custom = ok(await t.req('POST', '/v0/tenant_domains', { hostname: `links-${Date.now()}.example.com` }, as(key)), 201).tenantDomainId;
    for (let p = 0; p < 3; p++) {
      const page = ok(
        await t.req('POST', '/v0/pages', { name: `P${p}`, title: 'T', pageContext: 'c', pageType: 'inbound' }, as(key)),
        201,
      ).pageId;
      pages.push(page);
      const audience = ok(await t.req('POST', `/v0/pages/${page}/audiences`, {}, as(key)), 201).audienceId;
      const targets = [
        { targetType: 'page', pageId: page },
        { targetType: 'page_routing', pageId: page },
        { targetType: 'audience', audienceId: audience },
      ];
      for (const [i, target] of targets.entries()) {
        for (const domain of [fallback, custom]) {
          const path = `/p${p}/route-${i}/Zoë-%_"${domain === custom ? 'c' : 'f'}`;
          const body = ok(await t.req('POST', '/v0/page_links', { path, target, tenantDomainId: domain }, as(key)), 201);
          links.set(body.pageLinkId, {
            id: body.pageLinkId,
            createdAt: body.createdAt,
            path: body.path,
            type: target.targetType,
            domain,
            pageId: page,
          });
        }
      }
    }
  });

  test('after creates, on each domain', async () => {
    await check(fallback);
    await check(custom);
  });

  test('after a link delete and a page delete', async () => {
    const first = [...links.values()][0];
    assert.ok(first);
    ok(await t.req('DELETE', `/v0/page_links/${first.id}`, undefined, as(key)), 204);
    links.delete(first.id);
    ok(await t.req('DELETE', `/v0/pages/${pages[1]}`, undefined, as(key)), 204);
    for (const l of [...links.values()]) if (l.pageId === pages[1]) links.delete(l.id);
    await check(fallback);
    await check(custom);
  });

  test('after its domain is deleted, a new domain starts from nothing', async () => {
    ok(await t.req('DELETE', `/v0/tenant_domains/${custom}`, undefined, as(key)), 204);
    for (const l of [...links.values()]) if (l.domain === custom) links.delete(l.id);
    await check(fallback);
    const again = ok(
      await t.req('POST', '/v0/tenant_domains', { hostname: `again-${Date.now()}.example.com` }, as(key)),
      201,
    ).tenantDomainId;
    await check(again);
  });
});

describe('audience search: prefix matches first, then newest; totalCount up to 100', () => {
  let key: string;
  let pageId: string;
  const created: { id: string; createdAt: string; name: string }[] = [];

  async function expectSearch(text: string, limit: number): Promise<void> {
    const matching = created.filter((a) => contains([a.name, 'Searchable page'], text));
    const atStart = (a: { name: string }) => a.name.toLowerCase().startsWith(text) || 'searchable page'.startsWith(text);
    const expected = [...newestFirst(matching.filter(atStart)), ...newestFirst(matching.filter((a) => !atStart(a)))];
    const body = ok(await t.req('GET', `/v0/audiences/search?query=${encodeURIComponent(text)}&limit=${limit}`, undefined, as(key)));
    assert.deepEqual(
      body.items.map((i: Json) => i.audienceId),
      expected.slice(0, limit).map((a) => a.id),
      `query ${JSON.stringify(text)}`,
    );
    assert.equal(body.hasMore, expected.length > limit);
    assert.equal(body.totalCount, expected.length > 100 ? null : expected.length);
  }

  before(async () => {
    key = (await t.newTenant('Audience search')).key;
    pageId = ok(
      await t.req('POST', '/v0/pages', { name: 'Searchable page', title: 'T', pageContext: 'c', pageType: 'inbound' }, as(key)),
      201,
    ).pageId;
    // 101 audiences, so that one text matches more than the count goes and others fewer; the
    // prefix matches are the oldest, so that prefix-first and newest-first disagree.
    for (let i = 0; i < 101; i++) {
      const customName = i < 5 ? `Zeta buyer ${i}` : i < 30 ? `Buyer zeta ${i}` : `Other buyer ${i}`;
      const body = ok(await t.req('POST', `/v0/pages/${pageId}/audiences`, { customName }, as(key)), 201);
      created.push({ id: body.audienceId, createdAt: body.createdAt, name: customName });
    }
  });

  test('exact up to 100 matches, null beyond; orders unchanged', async () => {
    for (const text of [
      'zeta',
      'zet',
      'ze',
      'z',
      'buyer',
      'buy',
      'b',
      'other',
      'searchable',
      'able',
      'xyz',
      '',
      'zeta buyer 4',
      '%',
      '_',
      'zeta_',
      'r z',
    ]) {
      for (const limit of [1, 20, 100]) await expectSearch(text, limit);
    }
  });

  test('archived audiences leave the count and the page', async () => {
    const archived = created.splice(0, 2);
    for (const a of archived) ok(await t.req('POST', `/v0/pages/${pageId}/audiences/${a.id}/archive`, undefined, as(key)));
    for (const text of ['zeta', 'buyer', '']) await expectSearch(text, 20);
  });

  test('a page of more audiences than one statement rewrites: renamed (read from the page) and deleted, each of them follows', async () => {
    const { key: own } = await t.newTenant('Chunked rename');
    const page = ok(
      await t.req('POST', '/v0/pages', { name: 'Chunked page', title: 'T', pageContext: 'c', pageType: 'inbound' }, as(own)),
      201,
    );
    // One more than a statement takes (audiences/page-copies.ts COPY_BATCH).
    for (let i = 0; i < COPY_BATCH + 1; i++)
      ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, { customName: `Member ${i}` }, as(own)), 201);
    const search = async (text: string) =>
      ok(await t.req('GET', `/v0/audiences/search?query=${encodeURIComponent(text)}&limit=100`, undefined, as(own)));
    const stale = async (column: 'page_deleted', value: number) =>
      Number(
        (
          await t.app.db
            .selectFrom('audiences')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('page_id', '=', page.pageId)
            .where(column, '<>', value)
            .executeTakeFirstOrThrow()
        ).n,
      );
    ok(await t.req('PATCH', `/v0/pages/${page.pageId}`, { name: 'Renamed chunk' }, as(own)));
    const renamed = await search('renamed chunk');
    assert.equal(renamed.items.length, 100);
    assert.equal(renamed.totalCount, null);
    assert.ok(renamed.items.every((i: Json) => i.pageName === 'Renamed chunk'));
    assert.equal((await search('chunked page')).items.length, 0);
    assert.equal((await search('member 1000')).items[0]?.pageName, 'Renamed chunk');
    ok(await t.req('DELETE', `/v0/pages/${page.pageId}`, undefined, as(own)), 204);
    assert.equal(await stale('page_deleted', 1), 0);
    assert.equal((await search('renamed chunk')).totalCount, 0);
    assert.equal((await search('member')).totalCount, 0);
  });

  test('a tenant whose rows are out of time order is still answered in order', async () => {
    // A clock that stepped back: a row written after the others with an earlier time.
    const [first] = created;
    assert.ok(first);
    const row = await t.app.db.selectFrom('audiences').selectAll().where('id', '=', first.id).executeTakeFirstOrThrow();
    const id = newId('audience');
    const createdAt = '2000-01-01T00:00:00.000Z';
    await t.app.db
      .insertInto('audiences')
      .values({
        ...row,
        id,
        number: 999,
        person_route_key: null,
        home_page: 0,
        created_at: createdAt,
        custom_name: 'Zeta early',
        effective_name: 'Zeta early',
        effective_name_lc: 'zeta early',
      })
      .execute();
    created.push({ id, createdAt, name: 'Zeta early' });
    if (!onPostgres) {
      // SQLite then stops reading this tenant in FTS row order; PostgreSQL's postings are keyed by time.
      const flagged = await sql<{ n: number }>`select count(*) as n from search_disorder where table_name = 'audiences'`.execute(t.app.db);
      assert.ok(Number(flagged.rows[0]?.n) >= 1);
    }
    for (const text of ['zeta', 'zet', 'early']) await expectSearch(text, 20);
  });
});

describe('PostgreSQL: trigram postings', { skip: !onPostgres && 'PostgreSQL only: SQLite reads its FTS index in row order' }, () => {
  /** What the postings should hold: every trigram of every live row, computed here from the rows. */
  async function expectedPostings(): Promise<string[]> {
    const expected: string[] = [];
    // Audiences' postings hold their own names only since 0068.
    const current = POSTED_SEARCHES.map((s) => (s.table === 'audiences' ? pageNameOnceMigration.AUDIENCE_POSTINGS : s));
    for (const search of current) {
      const { rows } = await sql<Record<string, string>>`select id, created_at, ${sql.ref(search.scope)} as scope, ${sql.join(
        search.columns.map((c) => sql.ref(c)),
      )} from ${sql.table(search.table)} where ${sql.raw(search.live(search.table))}`.execute(t.app.db);
      for (const row of rows) {
        const grams = new Set(search.columns.flatMap((c) => trigramsOf(row[c] ?? '')));
        for (const gram of grams) expected.push(JSON.stringify([search.table, row.scope, gram, row.created_at, row.id]));
      }
    }
    return expected.sort();
  }
  async function storedPostings(): Promise<string[]> {
    const rows = await t.app.db.selectFrom('search_postings').selectAll().execute();
    return rows.map((r) => JSON.stringify([r.source, r.scope_id, r.gram, r.created_at, r.row_id])).sort();
  }

  test('are the trigrams of every live row, after every write of the tests above', async () => {
    const expected = await expectedPostings();
    assert.ok(expected.length > 1000, `only ${expected.length} postings: the tests above wrote too little to check`);
    assert.deepEqual(await storedPostings(), expected);
  });

  test('the migration fills them from the rows stored before it (down, then up again)', async () => {
    await t.app.db.transaction().execute(async (trx) => {
      const db = trx as unknown as Kysely<unknown>;
      // Triggers deferred to commit (the site sequence) fire at once: pending ones refuse DDL (PostgreSQL).
      if (onPostgres) await sql`set constraints all immediate`.execute(trx);
      await pageNamesIndexMigration.down(db);
      await pageNameOnceMigration.down(db);
      await searchPostingsMigration.down(db);
      await searchPostingsMigration.up(db);
      await pageNameOnceMigration.up(db);
      await pageNamesIndexMigration.up(db);
    });
    assert.deepEqual(await storedPostings(), await expectedPostings());
  });

  test('a longer text walks its rarest trigram and finds every match, newest first', async () => {
    const { key } = await t.newTenant('Rarest trigram');
    // "common" appears in every account, "zq7" in a few old ones: the walk must take "zq7".
    const made: { id: string; name: string }[] = [];
    for (let i = 0; i < 30; i++) {
      const name = i % 10 === 3 ? `Common zq7 ${i}` : `Common ${i}`;
      made.push({ id: ok(await t.req('POST', '/v0/accounts', { name, domain: `c${i}.example` }, as(key)), 201).accountId, name });
    }
    const found = await searchAll(key, '/v0/accounts/search?query=common%20zq7', 3);
    assert.deepEqual(
      found.map((a) => a.accountId),
      made
        .filter((a) => a.name.includes('zq7'))
        .reverse()
        .map((a) => a.id),
    );
    assert.equal((await searchAll(key, '/v0/accounts/search?query=common', 30)).length, 30);
  });

  test('a text of 255 characters finds its one match (only some of its trigrams are probed)', async () => {
    const { key } = await t.newTenant('Long text');
    const long = Array.from({ length: 255 }, (_, i) => 'abcdefghijklmnopqrstuvwxyz0123456789'[(i * 7) % 36]).join('');
    const target = ok(await t.req('POST', '/v0/accounts', { name: long, domain: 'long.example' }, as(key)), 201).accountId;
    ok(await t.req('POST', '/v0/accounts', { name: long.slice(0, 254), domain: 'shorter.example' }, as(key)), 201);
    const found = await searchAll(key, `/v0/accounts/search?query=${long}`, 1);
    assert.deepEqual(
      found.map((a) => a.accountId),
      [target],
    );
  });
});

describe('a search page that ends up empty', () => {
  test('a cursor whose later matches were deleted gets no items and the count as it now is', async () => {
    const { key } = await t.newTenant('Empty page');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(ok(await t.req('POST', '/v0/accounts', { name: `Qvx ${i}`, domain: `qvx${i}.example` }, as(key)), 201).accountId);
    }
    const first = ok(await t.req('GET', '/v0/accounts/search?query=qvx&limit=2', undefined, as(key)));
    assert.equal(first.totalCount, 5);
    assert.deepEqual(
      first.items.map((a: Json) => a.accountId),
      [ids[4], ids[3]],
    );
    // The three older matches go: the next page is empty, and the count says what is left.
    for (const id of ids.slice(0, 3)) ok(await t.req('DELETE', `/v0/accounts/${id}`, undefined, as(key)), 204);
    const next = ok(
      await t.req('GET', `/v0/accounts/search?query=qvx&limit=2&cursor=${encodeURIComponent(first.nextCursor)}`, undefined, as(key)),
    );
    assert.deepEqual(next.items, []);
    assert.equal(next.hasMore, false);
    assert.equal(next.totalCount, 2);
    const none = ok(await t.req('GET', '/v0/accounts/search?query=qvz', undefined, as(key)));
    assert.deepEqual([none.items.length, none.totalCount], [0, 0]);
  });
});
