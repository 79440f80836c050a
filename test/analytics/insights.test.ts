import assert from 'node:assert/strict';
import { until } from '../until.js';
import { after, before, describe, test } from 'node:test';
import { USER_AGENT } from '../browser.js';
import { expectProblem, type Json, ok, startApp, type TestApp } from '../helpers.js';
import { audienceOf, fallbackHost, link, publishedPage, unique, viewClaims, visit } from '../site/serve-helpers.js';

// Issue 28, first half: what the collector keeps of a visit (source, device, country, visitor),
// the analytics built on it (visitors, groupBy, compare, the site), realtime, and the two visit
// events, all driven through served pages and the reports their script sends.

const PROXY = '10.9.0.0/16';
const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
let t: TestApp;
let host: string;

before(async () => {
  t = await startApp({ TRUST_PROXY: PROXY, SESSION_IDLE_SECONDS: '2', COLLECT_RATE_PER_MINUTE: '1000' }, { sessionEndsEveryMs: 100 });
  host = await fallbackHost(t);
});
after(async () => {
  await t.close();
});

let n = 0;
const nextAddress = () => `198.51.100.${++n}`;

interface Served {
  token: string;
  visitId: string;
}

/** Serves `path` to a visitor and returns the view token the document carries. */
async function serve(path: string, opts: { address: string; userAgent?: string; referer?: string }): Promise<Served> {
  const res = await visit(t, host, path, {
    remoteAddress: opts.address,
    headers: { 'user-agent': opts.userAgent ?? USER_AGENT, ...(opts.referer ? { referer: opts.referer } : {}) },
  });
  assert.equal(res.statusCode, 200, res.body);
  const view = /<script type="application\/json" id="pam-view">([^<]*)<\/script>/.exec(res.body)?.[1];
  assert.ok(view, 'the document carries its view token');
  const token = JSON.parse(view).token as string;
  const claims = viewClaims(token) as { visitId: string };
  return { token, visitId: claims.visitId };
}

/** What the measuring script posts, as it posts it (text/plain). */
async function report(
  served: Served,
  opts: { address: string; userAgent?: string; forwardedFor?: string; fields?: Json },
): Promise<number> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/_pam/collect',
    remoteAddress: opts.address,
    headers: {
      host,
      'content-type': 'text/plain;charset=UTF-8',
      'user-agent': opts.userAgent ?? USER_AGENT,
      ...(opts.forwardedFor ? { 'x-forwarded-for': opts.forwardedFor } : {}),
    },
    payload: JSON.stringify({ token: served.token, visibleMs: 1000, scroll: 10, clicks: 1, questions: 0, conversions: 0, ...opts.fields }),
  });
  return res.statusCode;
}

async function sessionOf(pageId: string, visitId: string): Promise<Json> {
  const items = ok(await t.req('GET', `/v0/pages/${pageId}/audience_sessions?limit=100`)).items as Json[];
  const found = items.find((s) => s.analyticsSessionId === visitId);
  assert.ok(found, `the session of ${visitId}`);
  return found;
}

/** A published page and an audience with a link of its own. */
async function landing(fields: Json = {}): Promise<{ page: Json; audience: Json; path: string }> {
  const page = await publishedPage(t);
  const audience = await audienceOf(t, page.pageId, fields);
  const path = unique('in');
  await link(t, path, { targetType: 'audience', audienceId: audience.audienceId });
  return { page, audience, path };
}

const iso = (ms: number) => new Date(ms).toISOString();

describe('collection, stored as classes only', () => {
  test('a search engine referrer gives search; a mobile user agent gives mobile; the hash and address are never shown', async () => {
    const { page, path } = await landing();
    const address = nextAddress();
    const served = await serve(path, { address, userAgent: IPHONE, referer: 'https://www.google.com/' });
    assert.equal(await report(served, { address, userAgent: IPHONE, fields: { referrer: 'https://www.google.com/' } }), 204);
    const session = await sessionOf(page.pageId, served.visitId);
    assert.equal(session.channel, 'search');
    assert.equal(session.referrerHost, 'google.com');
    assert.equal(session.deviceType, 'mobile');
    assert.equal(session.os, 'iOS');
    assert.match(session.browser, /Safari/);
    const text = JSON.stringify(session);
    assert.doesNotMatch(text, /visitorHash|visitor_hash|198\.51\.100|iPhone OS/);
    const csv = await t.app.inject({
      method: 'GET',
      url: `/v0/pages/${page.pageId}/audience_sessions/export`,
      headers: { 'x-api-key': t.key },
    });
    if (csv.statusCode === 200) {
      const [header] = csv.body.split('\r\n');
      for (const column of ['referrerHost', 'channel', 'deviceType', 'browser', 'os', 'country'])
        assert.ok(header?.includes(column), column);
      assert.ok(csv.body.includes('google.com'));
      assert.doesNotMatch(csv.body, /198\.51\.100|iPhone OS/);
    }
  });

  test('channels: direct, same host, social, email, paid by click id and by utm_medium, other hosts a referral', async () => {
    const { page, path } = await landing();
    const cases: [Json, string, string][] = [
      [{}, 'direct', ''],
      [{ referrer: `https://${host}/elsewhere` }, 'direct', ''],
      [{ referrer: 'https://m.facebook.com/' }, 'social', 'm.facebook.com'],
      [{ referrer: 'https://mail.google.com/' }, 'email', 'mail.google.com'],
      [{ referrer: 'https://www.google.com/', adClick: true }, 'paid', 'google.com'],
      [{ utmMedium: 'CPC' }, 'paid', ''],
      [{ referrer: 'https://blog.example.org/post' }, 'referral', 'blog.example.org'],
      [{ referrer: 'not a url' }, 'direct', ''],
    ];
    for (const [fields, channel, referrerHost] of cases) {
      const address = nextAddress();
      const served = await serve(path, { address });
      assert.equal(await report(served, { address, fields }), 204);
      const session = await sessionOf(page.pageId, served.visitId);
      assert.deepEqual([session.channel, session.referrerHost], [channel, referrerHost], JSON.stringify(fields));
      assert.equal(session.deviceType, 'desktop');
    }
  });

  test('the first report fixes the classes: a later one cannot change them', async () => {
    const { page, path } = await landing();
    const address = nextAddress();
    const served = await serve(path, { address });
    assert.equal(await report(served, { address, fields: { referrer: 'https://www.bing.com/' } }), 204);
    assert.equal(await report(served, { address, userAgent: IPHONE, fields: { referrer: 'https://facebook.com/' } }), 204);
    const session = await sessionOf(page.pageId, served.visitId);
    assert.deepEqual([session.channel, session.referrerHost, session.deviceType], ['search', 'bing.com', 'desktop']);
  });

  test('X-Forwarded-For of a public address through a trusted proxy gives its country; from anyone else it is not believed', async () => {
    const { page, path } = await landing();
    const proxied = await serve(path, { address: '10.9.0.7' });
    assert.equal(await report(proxied, { address: '10.9.0.7', forwardedFor: '81.2.69.142' }), 204);
    assert.equal((await sessionOf(page.pageId, proxied.visitId)).country, 'GB');
    const direct = await serve(path, { address: nextAddress() });
    assert.equal(await report(direct, { address: '203.0.113.9', forwardedFor: '81.2.69.142' }), 204);
    assert.equal((await sessionOf(page.pageId, direct.visitId)).country, '', 'a documentation address is in no country');
  });

  test('a referrer longer than the report allows is refused, and the report stays within 2 KB', async () => {
    const { path } = await landing();
    const address = nextAddress();
    const served = await serve(path, { address });
    assert.equal(await report(served, { address, fields: { referrer: `https://x.example/${'a'.repeat(1100)}` } }), 400);
    assert.equal(await report(served, { address, fields: { referrer: `https://x.example/${'a'.repeat(990)}` } }), 204);
    assert.equal(await report(served, { address, fields: { adClick: 'yes' } }), 400);
  });
});

describe('analytics', () => {
  test('two visits from one address and user agent on one day: visitors 1, visits 2; another address is another visitor', async () => {
    const { page, path } = await landing();
    const address = nextAddress();
    for (let i = 0; i < 2; i++) {
      const served = await serve(path, { address });
      assert.equal(await report(served, { address }), 204);
    }
    const other = nextAddress();
    assert.equal(await report(await serve(path, { address: other }), { address: other }), 204);
    const day = Date.parse(`${new Date().toISOString().slice(0, 10)}T00:00:00.000Z`);
    const query = `startDate=${iso(day)}&endDate=${iso(day + 86_400_000)}`;
    const answer = ok(await t.req('GET', `/v0/pages/${page.pageId}/analytics?${query}&interval=hour`));
    assert.equal(answer.totals.visits, 3);
    assert.equal(answer.totals.visitors, 2);
    const byHour = (answer.series as Json[]).reduce((sum, b) => sum + b.visitors, 0);
    assert.equal(byHour, 2, 'a visitor counts in the hour of their first visit of the day');
    const site = ok(await t.req('GET', `/v0/analytics/site?${query}`));
    assert.ok(site.totals.visits >= 3);
    const overview = ok(await t.req('GET', `/v0/analytics/pages?${query}&limit=100`)).items as Json[];
    const mine = overview.find((p) => p.pageId === page.pageId);
    assert.deepEqual([mine?.visits, mine?.visitors], [3, 2]);
  });

  test('a visitor of two pages counts once on the site and once on each page', async () => {
    const a = await landing();
    const b = await landing();
    const address = nextAddress();
    const start = Date.now() - 1000;
    assert.equal(await report(await serve(a.path, { address }), { address }), 204);
    assert.equal(await report(await serve(b.path, { address }), { address }), 204);
    const query = `startDate=${iso(start)}&endDate=${iso(Date.now() + 1000)}`;
    assert.equal(ok(await t.req('GET', `/v0/pages/${a.page.pageId}/analytics?${query}`)).totals.visitors, 1);
    assert.equal(ok(await t.req('GET', `/v0/pages/${b.page.pageId}/analytics?${query}`)).totals.visitors, 1);
    const site = ok(await t.req('GET', `/v0/analytics/site?${query}&groupBy=channel`));
    // Other tests' visits may fall in the range too: the site has at least these two visits and one fewer visitor than visits from this address.
    assert.ok(site.totals.visits >= 2);
    assert.ok(site.totals.visitors <= site.totals.visits - 1);
  });

  test('groupBy channel, deviceType and country split the visits; the site endpoint groups all pages', async () => {
    const { page, path } = await landing();
    const start = Date.now() - 1000;
    const sends: [string, Json, string?][] = [
      [USER_AGENT, { referrer: 'https://www.google.com/' }],
      [USER_AGENT, { referrer: 'https://www.google.com/' }],
      [IPHONE, { referrer: 'https://facebook.com/' }, '81.2.69.142'],
    ];
    for (const [userAgent, fields, forwardedFor] of sends) {
      const address = forwardedFor ? '10.9.0.8' : nextAddress();
      const served = await serve(path, { address, userAgent });
      assert.equal(await report(served, { address, userAgent, fields, ...(forwardedFor ? { forwardedFor } : {}) }), 204);
    }
    const query = `startDate=${iso(start)}&endDate=${iso(Date.now() + 1000)}`;
    const groups = async (groupBy: string) =>
      Object.fromEntries(
        (ok(await t.req('GET', `/v0/pages/${page.pageId}/analytics?${query}&groupBy=${groupBy}`)).groups as Json[]).map((g) => [
          g.key,
          g.visits,
        ]),
      );
    assert.deepEqual(await groups('channel'), { search: 2, social: 1 });
    assert.deepEqual(await groups('referrerHost'), { 'google.com': 2, 'facebook.com': 1 });
    assert.deepEqual(await groups('deviceType'), { desktop: 2, mobile: 1 });
    assert.deepEqual(await groups('country'), { '': 2, GB: 1 });
    assert.equal(Object.keys(await groups('os')).length, 2);
    const overview = ok(await t.req('GET', `/v0/analytics/pages?${query}&groupBy=channel&limit=100`)).items as Json[];
    const mine = overview.find((p) => p.pageId === page.pageId);
    assert.ok(mine, 'the page is in the overview');
    assert.deepEqual(Object.fromEntries((mine.groups as Json[]).map((g) => [g.key, g.visits])), { search: 2, social: 1 });
    const site = ok(await t.req('GET', `/v0/analytics/site?${query}&groupBy=channel`));
    const channels = Object.fromEntries((site.groups as Json[]).map((g) => [g.key, g.visits]));
    assert.ok(channels.search >= 2 && channels.social >= 1);
  });

  test('compare=previous_period matches two separate queries', async () => {
    const { page, path } = await landing();
    const address = nextAddress();
    assert.equal(await report(await serve(path, { address }), { address }), 204);
    const end = Date.now() + 60_000;
    const start = end - 2 * 3_600_000;
    const current = ok(await t.req('GET', `/v0/pages/${page.pageId}/analytics?startDate=${iso(start)}&endDate=${iso(end)}`));
    const before = ok(
      await t.req('GET', `/v0/pages/${page.pageId}/analytics?startDate=${iso(start - (end - start))}&endDate=${iso(start)}`),
    );
    const compared = ok(
      await t.req('GET', `/v0/pages/${page.pageId}/analytics?startDate=${iso(start)}&endDate=${iso(end)}&compare=previous_period`),
    );
    assert.deepEqual(compared.totals, current.totals);
    assert.deepEqual(compared.previous.totals, before.totals);
    assert.equal(compared.previous.startDate, iso(start - (end - start)));
    assert.equal(compared.change.visits, null, 'no visits before: no change to speak of');
    // The site answer and its own previous period agree the same way.
    const siteNow = ok(await t.req('GET', `/v0/analytics/site?startDate=${iso(start)}&endDate=${iso(end)}`));
    const siteBefore = ok(await t.req('GET', `/v0/analytics/site?startDate=${iso(start - (end - start))}&endDate=${iso(start)}`));
    const site = ok(await t.req('GET', `/v0/analytics/site?startDate=${iso(start)}&endDate=${iso(end)}&compare=previous_period`));
    assert.deepEqual(site.previous.totals, siteBefore.totals);
    assert.equal(site.totals.visits, siteNow.totals.visits);
    const expected = siteBefore.totals.visits === 0 ? null : (siteNow.totals.visits - siteBefore.totals.visits) / siteBefore.totals.visits;
    assert.equal(site.change.visits, expected === null ? null : Math.round(expected * 1e6) / 1e6);
    const overview = ok(
      await t.req('GET', `/v0/analytics/pages?startDate=${iso(start)}&endDate=${iso(end)}&compare=previous_period&limit=100`),
    ).items as Json[];
    const mine = overview.find((p) => p.pageId === page.pageId);
    assert.equal(mine?.previous.totals.visits, before.totals.visits);
  });

  test('bad groupBy and compare are 400 naming the field', async () => {
    const { page } = await landing();
    for (const url of [
      `/v0/pages/${page.pageId}/analytics?groupBy=city`,
      `/v0/analytics/pages?groupBy=audience`,
      `/v0/analytics/site?groupBy=arm`,
      `/v0/analytics/site?groupBy=`,
    ]) {
      expectProblem(await t.req('GET', url), 400, 'validation_failed', ['/groupBy']);
    }
    for (const url of [
      `/v0/pages/${page.pageId}/analytics?compare=previous_year`,
      `/v0/analytics/pages?compare=1`,
      `/v0/analytics/site?compare=PREVIOUS_PERIOD`,
    ]) {
      expectProblem(await t.req('GET', url), 400, 'validation_failed', ['/compare']);
    }
    expectProblem(
      await t.req('GET', '/v0/analytics/site?startDate=2026-01-01T00:00:00Z&endDate=2027-02-06T00:00:00Z'),
      400,
      'validation_failed',
      ['/endDate'],
    );
    expectProblem(await t.req('GET', '/v0/analytics/realtime?x=1'), 400, 'validation_failed');
  });
});

describe('right now, and telling sales', () => {
  test('realtime lists a visit while it is open, with its person, path, channel and country; gone once ended', async () => {
    const person = ok(await t.req('POST', '/v0/persons', { name: 'Ada Lovelace', domain: 'analytical.example' }), 201);
    const account = ok(await t.req('POST', '/v0/accounts', { name: 'Analytical', domain: 'analytical.example' }), 201);
    const { page, audience, path } = await landing({ personId: person.personId });
    // A goal of this path: the visit reaches it, and session.ended says so.
    const goal = ok(await t.req('POST', '/v0/goals', { name: 'Reached the landing', kind: 'path', path }), 201);
    const served = await serve(path, { address: '10.9.0.9' });
    assert.equal(
      await report(served, { address: '10.9.0.9', forwardedFor: '81.2.69.142', fields: { referrer: 'https://duckduckgo.com/' } }),
      204,
    );
    const now = ok(await t.req('GET', '/v0/analytics/realtime'));
    const mine = (now.visits as Json[]).find((v) => v.audienceId === audience.audienceId);
    assert.ok(mine, JSON.stringify(now));
    assert.equal(now.count >= 1, true);
    assert.deepEqual(
      [mine.pageId, mine.personId, mine.accountId, mine.path, mine.channel, mine.country],
      [page.pageId, person.personId, account.accountId, path, 'search', 'GB'],
    );
    assert.deepEqual([mine.pageName, mine.personName, mine.accountName], [page.name, 'Ada Lovelace', 'Analytical']);
    assert.deepEqual([mine.audienceName, mine.audienceKind], [audience.effectiveName, 'person']);

    // visit.started once, though the visit reports again.
    assert.equal(await report(served, { address: '10.9.0.9', fields: { clicks: 2 } }), 204);
    const started = (ok(await t.req('GET', '/v0/events?type=visit.started&limit=100')).items as Json[]).filter(
      (e) => e.payload.data.analyticsSessionId === served.visitId,
    );
    assert.equal(started.length, 1);
    assert.deepEqual(
      [started[0].payload.data.personId, started[0].payload.data.accountId, started[0].payload.data.path, started[0].payload.data.channel],
      [person.personId, account.accountId, path, 'search'],
    );

    // SESSION_IDLE_SECONDS is 2 here: session.ended arrives once, then the visit is no longer active.
    const ended = await until(
      'the session ended',
      async () => {
        const items = (ok(await t.req('GET', '/v0/events?type=session.ended&limit=100')).items as Json[]).filter(
          (e) => e.payload.data.analyticsSessionId === served.visitId,
        );
        return items.length > 0 ? items : undefined;
      },
      10_000,
    );
    await new Promise((r) => setTimeout(r, 500));
    const again = (ok(await t.req('GET', '/v0/events?type=session.ended&limit=100')).items as Json[]).filter(
      (e) => e.payload.data.analyticsSessionId === served.visitId,
    );
    assert.equal(again.length, 1);
    const data = ended[0].payload.data;
    assert.deepEqual(
      [data.personId, data.accountId, data.totalClicksCount, data.goalsReached],
      [person.personId, account.accountId, 2, [{ goalId: goal.goalId, name: 'Reached the landing' }]],
    );
    assert.equal(typeof data.timeSpentSeconds, 'number');
    const later = ok(await t.req('GET', '/v0/analytics/realtime'));
    assert.ok(!(later.visits as Json[]).some((v) => v.audienceId === audience.audienceId));
  });

  test('realtime names the audience a visit was shown and whether it is a segment (issue 39)', async () => {
    const page = await publishedPage(t, { content: { headline: 'Everyone', subheadline: '', sections: [] } });
    const path = unique('seg');
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    const rules = { match: 'all', conditions: [{ field: 'utm.source', operator: 'equals', value: 'linkedin' }] };
    const segment = await audienceOf(t, page.pageId, { customName: 'LinkedIn <b>ads</b>', rules, priority: 3 });
    const home = await audienceOf(t, page.pageId, { flags: ['home_page'], customName: 'Home' });
    const plain = await landing({ customName: 'Plain' });
    const shown: [string, string, string][] = [
      [`${path}?utm_source=linkedin`, segment.audienceId, 'segment'],
      [path, home.audienceId, 'home'],
      [plain.path, plain.audience.audienceId, 'other'],
    ];
    for (const [url] of shown) {
      const address = nextAddress();
      assert.equal(await report(await serve(url, { address }), { address }), 204);
    }
    const listed = ok(await t.req('GET', '/v0/analytics/realtime')).visits as Json[];
    const names: Record<string, string> = {
      [segment.audienceId]: 'LinkedIn <b>ads</b>',
      [home.audienceId]: 'Home',
      [plain.audience.audienceId]: 'Plain',
    };
    for (const [, audienceId, kind] of shown) {
      const found = listed.find((v) => v.audienceId === audienceId);
      assert.ok(found, `${kind}: ${JSON.stringify(listed)}`);
      assert.deepEqual([found.audienceName, found.audienceKind], [names[audienceId], kind]);
    }
  });

  test('a visit without a person starts no visit.started; the page left ends it within a minute (here the idle time)', async () => {
    const { path } = await landing();
    const address = nextAddress();
    const served = await serve(path, { address });
    assert.equal(await report(served, { address, fields: { left: true } }), 204);
    const ended = await until(
      'the session ended',
      async () => {
        const items = (ok(await t.req('GET', '/v0/events?type=session.ended&limit=100')).items as Json[]).filter(
          (e) => e.payload.data.analyticsSessionId === served.visitId,
        );
        return items.length > 0 ? items : undefined;
      },
      10_000,
    );
    assert.equal(ended.length, 1);
    assert.equal(ended[0].payload.data.personId, null);
    const started = (ok(await t.req('GET', '/v0/events?type=visit.started&limit=100')).items as Json[]).filter(
      (e) => e.payload.data.analyticsSessionId === served.visitId,
    );
    assert.equal(started.length, 0);
  });

  test('a visit that reports on past its first due time ends the idle time after its last report, and is listed until then', async () => {
    const { audience, path } = await landing();
    const address = nextAddress();
    const served = await serve(path, { address });
    const endedOf = async () =>
      (ok(await t.req('GET', '/v0/events?type=session.ended&limit=100')).items as Json[]).filter(
        (e) => e.payload.data.analyticsSessionId === served.visitId,
      );
    const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
    // SESSION_IDLE_SECONDS is 2 here. Reports every 1.2 s, so the first one's due time passes while
    // the visit goes on: each must move the end on, whether or not it rewrites the stored due time.
    let last = 0;
    for (let i = 0; i < 4; i++) {
      if (i > 0) await pause(1200);
      last = Date.now();
      assert.equal(await report(served, { address, fields: { visibleMs: 1000 + i * 1000 } }), 204);
      const listed = ok(await t.req('GET', '/v0/analytics/realtime')).visits as Json[];
      assert.ok(
        listed.some((v) => v.audienceId === audience.audienceId),
        `listed after report ${i + 1}`,
      );
      // Its end falls due 2 s after this report at the earliest (the service stamps it on arrival).
      const ended = await endedOf();
      if (Date.now() < last + 2000) assert.equal(ended.length, 0, `no session.ended ${Date.now() - last} ms after report ${i + 1}`);
    }
    const ended = await until(
      'the session ended',
      async () => {
        const items = await endedOf();
        return items.length > 0 ? items : undefined;
      },
      10_000,
    );
    assert.ok(Date.now() >= last + 2000, 'not before the idle time after the last report');
    await pause(500);
    assert.equal((await endedOf()).length, 1, 'once');
    assert.ok(Date.parse(ended[0].payload.data.sessionEndedAt) >= last - 1000, 'its end is the last report');
    const later = ok(await t.req('GET', '/v0/analytics/realtime')).visits as Json[];
    assert.ok(!later.some((v) => v.audienceId === audience.audienceId), 'gone once ended');
  });
});
