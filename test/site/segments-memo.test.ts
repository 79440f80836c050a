import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { type Json, ok, onPostgres, startApp, type TestApp } from '../helpers.js';
import { audienceOf, fallbackHost, link, publishedPage, tokenIn, unique, viewClaims, visit } from './serve-helpers.js';

// Issue 50: choosing a segment must not cost more as the data grows. The outcome memo and a page's
// segments are kept under the tenant's change sequence, which a commit of visits does not move: on
// SQLite such a commit once emptied the memo, and then each page link path read its page again.
// Now the tenant's sequence is read once for all of its pages. An experiment that assigns each
// visitor an arm is remembered per arm, and assigned from the memo. Counted by the service's own
// statement counter.

const METRICS = 'segments-memo-metrics-token-0123456789';
let t: TestApp;
let host: string;
/** On PostgreSQL the `domains` counter is read on every request for 5 s after this process changed a domain (site/hosts.ts). */
let hostMadeAt = 0;
before(async () => {
  // Statements are counted process-wide: the scheduled sweeps, domain checks and experiment looks wait an hour.
  t = await startApp(
    { METRICS_TOKEN: METRICS, WEBHOOK_DISPATCHER: 'false', ALERT_SENDER: 'false' },
    { sessionEndsEveryMs: 3_600_000, domainChecksEveryMs: 3_600_000, reweighEveryMs: 3_600_000 },
  );
  host = await fallbackHost(t);
  hostMadeAt = Date.now();
});
after(async () => {
  await t.close();
});

/** A metric's value from /metrics (the sum of its lines). */
const metric = async (name: string) => {
  const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS}` } });
  let total = 0;
  for (const line of res.body.split('\n'))
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  return total;
};
const statements = () => metric('pam_db_query_duration_seconds_count');
/** A commit that changes nothing a visitor sees (as a recorded visit): SQLite's data_version moves, the site's sequence does not. */
const unrelatedCommit = () =>
  sql`insert into change_counters (scope, value) values ('test:unrelated', 1)
    on conflict (scope) do update set value = change_counters.value + 1`.execute(t.app.db);
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const see = async (path: string) => {
  const res = await visit(t, host, path, { headers: { 'user-agent': BROWSER } });
  assert.equal(res.statusCode, 200, res.body);
  return res.body;
};
/**
 * On PostgreSQL the `domains` counter is read on every look-up for 5 s after this process changed a
 * domain, then again 5 s after its last read (site/hosts.ts): past the first, it is read now (a
 * host known not to be a tenant's reads it at once), so that no read falls in a measured window.
 */
async function hostsJustRead(): Promise<void> {
  if (!onPostgres) return;
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, hostMadeAt + 5_100 - Date.now())));
  const stranger = `stranger-${Date.now().toString(36)}.example`;
  await visit(t, stranger, '/');
  const before = await statements();
  await visit(t, stranger, '/');
  assert.ok((await statements()) > before, 'a host known not to be a tenant reads the domains counter');
}

/** Statements counted so far, by operation kind: said when a count is off, to show what ran beside. */
async function statementKinds(): Promise<Map<string, number>> {
  const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS}` } });
  const kinds = new Map<string, number>();
  for (const line of res.body.split('\n')) {
    const kind = /^pam_db_query_duration_seconds_count\{.*operation="([a-z]+)"/.exec(line)?.[1];
    if (kind) kinds.set(kind, (kinds.get(kind) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return kinds;
}
const kindsSince = (before: Map<string, number>, after: Map<string, number>) =>
  [...after].map(([kind, n]) => `${kind} ${n - (before.get(kind) ?? 0)}`).join(', ');

/** The statements `run` costs, less what reading the counter costs. */
async function cost(run: () => Promise<void>): Promise<number> {
  const scrape = -(await statements()) + (await statements());
  const before = await statements();
  await run();
  return (await statements()) - before - scrape;
}

test('after a commit of visits, five segmented pages of a tenant read its sequence once, not their segments each', async () => {
  const paths: string[] = [];
  for (let p = 0; p < 5; p++) {
    const page = await publishedPage(t);
    // Several segments each: what was read again per page and per commit.
    for (let k = 0; k < 4; k++) {
      await audienceOf(t, page.pageId, {
        customName: `Source s${k}`,
        priority: k,
        rules: { match: 'all', conditions: [{ field: 'utm.source', operator: 'equals', value: `s${k}` }] },
      });
    }
    const path = unique(`segmented-${p}`);
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    paths.push(`${path}?utm_source=s${p % 4}`);
  }
  const all = async () => {
    for (const path of paths) await see(path);
  };
  await all();
  await all();
  // Past that window, so the count is the served path's own.
  await hostsJustRead();
  await unrelatedCommit();
  const one = await cost(() => see(paths[0] ?? '').then(() => undefined));
  await unrelatedCommit();
  const five = await cost(all);
  if (onPostgres) {
    // The memo is keyed by the sequence, read with the link: the commit changes no key, and each
    // further path costs that one statement.
    assert.ok(five - one <= 4, `${five} statements for five paths; ${one} for one`);
  } else {
    // The first path after a commit pays what is read once per committed state (the host, the
    // tenant's sequence); the memo is keyed by that sequence, which the commit did not move, so
    // each further path reads nothing (they each read their link and stamp when any commit
    // emptied the memo: 13 statements here, and 17 before that with their segments).
    assert.equal(five, one, `${five} statements for five paths; ${one} for one`);
  }
  // A change of a segment still shows at once.
  const page = paths[0] ?? '';
  assert.match(await see(page), /./);
});

test('a segmented path already served is answered from its segment memo: no miss, no read on SQLite', async () => {
  const page = await publishedPage(t);
  for (let k = 0; k < 3; k++) {
    await audienceOf(t, page.pageId, {
      customName: `Hot s${k}`,
      priority: k,
      rules: { match: 'all', conditions: [{ field: 'utm.source', operator: 'equals', value: `h${k}` }] },
    });
  }
  const path = unique('segmented-hot');
  await link(t, path, { targetType: 'page', pageId: page.pageId });
  const visits = [`${path}?utm_source=h0`, `${path}?utm_source=h2`, path];
  // Each visit's view token is its own: the rest of the document is the variant's.
  const variant = async (v: string) => {
    const body = await see(v);
    const { audienceId } = viewClaims(tokenIn(body));
    return `${audienceId} ${body.replace(/"token":"[^"]*"/, '')}`;
  };
  const shown = new Map<string, string>();
  for (const v of visits) shown.set(v, await variant(v));
  await hostsJustRead();
  const missesBefore = await metric('pam_site_outcome_memo_misses_total');
  const hitsBefore = await metric('pam_site_outcome_memo_hits_total');
  const spent = await cost(async () => {
    for (const v of visits) assert.equal(await variant(v), shown.get(v), v);
  });
  // Each visit: the path's memo, then its segment's, both found.
  assert.equal((await metric('pam_site_outcome_memo_misses_total')) - missesBefore, 0);
  assert.equal((await metric('pam_site_outcome_memo_hits_total')) - hitsBefore, 2 * visits.length);
  // PostgreSQL reads the tenant's sequence with the link, once a path.
  assert.equal(spent, onPostgres ? visits.length : 0);
  // Each segment is its own audience, and a visit matching none has the page's.
  assert.equal(new Set(shown.values()).size, visits.length);
});

test('an experiment path already served assigns each visitor from the memo: no miss, no read on SQLite, each token its visitor’s', {
  timeout: 120_000,
}, async () => {
  const content = (headline: string) => ({ headline, subheadline: '', sections: [] });
  const version = async (pageId: string, audienceId: string, headline: string, publish: boolean) => {
    const url = `/v0/pages/${pageId}/audiences/${audienceId}/versions`;
    const v = ok(await t.req('POST', url, { content: content(headline) }), 201);
    if (publish) ok(await t.req('PATCH', `${url}/${v.versionId}`, { status: 'published' }));
    return v.versionId as string;
  };
  const start = async (pageId: string, body: Json) => {
    const created = ok(await t.req('POST', `/v0/pages/${pageId}/experiments`, { name: 'Memo', minimumUnitsPerArm: 1, ...body }), 201);
    ok(await t.req('POST', `/v0/pages/${pageId}/experiments/${created.experimentId}/start`));
  };
  // A link to a page whose home audience runs a versions experiment: the path's own memo entry assigns.
  const whole = await publishedPage(t, { content: content('Page') });
  const home = await audienceOf(t, whole.pageId, { flags: ['home_page'] });
  const a = await version(whole.pageId, home.audienceId, 'Version A', true);
  const b = await version(whole.pageId, home.audienceId, 'Version B', false);
  await start(whole.pageId, {
    kind: 'versions',
    audienceId: home.audienceId,
    arms: [
      { key: 'a', weight: 50, versionId: a },
      { key: 'b', weight: 50, versionId: b },
    ],
  });
  const wholePath = unique('versions-hot');
  await link(t, wholePath, { targetType: 'page', pageId: whole.pageId });
  // A holdout over a segment: the segment's memo entry assigns.
  const split = await publishedPage(t, { content: content('Everyone') });
  const li = await audienceOf(t, split.pageId, {
    customName: 'Hot li',
    rules: { match: 'all', conditions: [{ field: 'utm.source', operator: 'equals', value: 'li' }] },
  });
  await version(split.pageId, li.audienceId, 'LinkedIn', true);
  await start(split.pageId, {
    kind: 'holdout',
    audienceId: li.audienceId,
    arms: [
      { key: 'control', weight: 50 },
      { key: 'personalised', weight: 50 },
    ],
  });
  const splitPath = unique('holdout-hot');
  await link(t, splitPath, { targetType: 'page', pageId: split.pageId });

  const paths = [wholePath, `${splitPath}?utm_source=li`];
  const visitors = Array.from({ length: 16 }, (_, i) => `198.51.100.${i + 1}`);
  const seen = async (path: string, remoteAddress: string) => {
    const res = await visit(t, host, path, { remoteAddress, headers: { 'user-agent': BROWSER } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['cache-control'], 'private, no-cache', 'another visitor of the URL may get another arm');
    const { arm, unit } = viewClaims(tokenIn(res.body)) as { arm: string; unit: string };
    const h1 = /<h1>(.*?)<\/h1>/s.exec(res.body)?.[1] ?? '';
    return { arm, unit, h1, body: res.body.replace(/"token":"[^"]*"/, '') };
  };
  const first = new Map<string, Awaited<ReturnType<typeof seen>>>();
  for (const path of paths) for (const v of visitors) first.set(`${path} ${v}`, await seen(path, v));
  for (const path of paths) {
    const arms = new Set(visitors.map((v) => first.get(`${path} ${v}`)?.arm));
    assert.equal(arms.size, 2, `${path}: both arms among 16 visitors`);
  }
  const wholeShown = visitors.map((v) => first.get(`${wholePath} ${v}`));
  assert.ok(wholeShown.every((s) => s?.h1 === (s?.arm === 'a' ? 'Version A' : 'Version B')));
  const again = async () => {
    for (const path of paths) {
      for (const v of visitors)
        assert.deepEqual(await seen(path, v), first.get(`${path} ${v}`), `${path} ${v}: the same arm, unit and document`);
    }
  };
  // Each first exposure stored its unit's arm. Once more, with nothing written.
  await again();
  await hostsJustRead();
  const missesBefore = await metric('pam_site_outcome_memo_misses_total');
  const hitsBefore = await metric('pam_site_outcome_memo_hits_total');
  const kindsBefore = await statementKinds();
  const spent = await cost(again);
  const kindsAfter = await statementKinds();
  // The whole page's path: its memo entry, then its arm's; the segment's: the path's, the segment's, the arm's.
  assert.equal((await metric('pam_site_outcome_memo_misses_total')) - missesBefore, 0);
  assert.equal((await metric('pam_site_outcome_memo_hits_total')) - hitsBefore, visitors.length * (2 + 3));
  // Twice off by a few on PostgreSQL in CI (29 and 39 for 32): the kinds say what ran beside the visits.
  assert.equal(
    spent,
    onPostgres ? paths.length * visitors.length : 0,
    `statements by kind, scrapes included: ${kindsSince(kindsBefore, kindsAfter)}`,
  );
  // Each visitor is its own unit, in both experiments.
  for (const path of paths) assert.equal(new Set(visitors.map((v) => first.get(`${path} ${v}`)?.unit)).size, visitors.length);

  // New visitors: each first exposure stores its unit (on SQLite a commit, which once emptied the
  // whole memo). No tenant's sequence moves, so every newcomer is answered from the memo still.
  const newcomers = Array.from({ length: 8 }, (_, i) => `198.51.100.${i + 101}`);
  const missesBeforeNew = await metric('pam_site_outcome_memo_misses_total');
  for (const path of paths) for (const v of newcomers) await seen(path, v);
  assert.equal((await metric('pam_site_outcome_memo_misses_total')) - missesBeforeNew, 0, 'first exposures keep the memo');
});
