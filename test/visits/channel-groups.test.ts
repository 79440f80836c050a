import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Kysely } from 'kysely';
import * as channelGroups from '../../src/db/migrations/2026_12_04_0045_channel_groups.js';
import { CHANNEL_GROUPS } from '../../src/db/enums.js';
import { applyCollectFunction } from '../../src/visits/index.js';
import { USER_AGENT } from '../browser.js';
import { expectProblem, type Json, ok, startApp, type TestApp } from '../helpers.js';
import { FORM_ACTION } from '../leads/lead-forms.js';
import { audienceOf, fallbackHost, link, publishedPage, unique, viewClaims, visit } from '../site/serve-helpers.js';

// Issue 45 §8: GA4's default channel groups on every session, through served visits and the
// collector's reports (the one-statement report on PostgreSQL, the transaction on SQLite), the
// sessions API, the CSV, realtime, leads, the analytics' groupings, segments, and migration 0045.

let t: TestApp;
let host: string;
before(async () => {
  t = await startApp({ COLLECT_RATE_PER_MINUTE: '10000' });
  host = await fallbackHost(t);
});
after(async () => {
  await t.close();
});

let n = 0;
const nextAddress = () => `198.51.${100 + Math.floor(n / 200)}.${(++n % 200) + 1}`;
const LINKEDIN_ADS = '?utm_source=linkedin&utm_medium=paid_social&utm_campaign=q4-launch';

interface Served {
  html: string;
  token: string;
  visitId: string;
  address: string;
}

/** Serves `path` to a new visitor; the document's view token names the visit. */
async function serve(path: string, referer?: string): Promise<Served> {
  const address = nextAddress();
  const res = await visit(t, host, path, {
    remoteAddress: address,
    headers: { 'user-agent': USER_AGENT, ...(referer ? { referer } : {}) },
  });
  assert.equal(res.statusCode, 200, res.body);
  const view = /<script type="application\/json" id="pam-view">([^<]*)<\/script>/.exec(res.body)?.[1];
  assert.ok(view, 'the document carries its view token');
  const token = JSON.parse(view).token as string;
  const claims = viewClaims(token) as { visitId: string };
  return { html: res.body, token, visitId: claims.visitId, address };
}

/** The measuring script's first report, with the landing URL's UTM values and the referrer as it sends them. */
async function report(served: Served, fields: Json): Promise<void> {
  const res = await visit(t, host, '/_pam/collect', {
    method: 'POST',
    remoteAddress: served.address,
    headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': USER_AGENT },
    payload: JSON.stringify({ token: served.token, visibleMs: 1000, scroll: 10, clicks: 1, questions: 0, conversions: 0, ...fields }),
  });
  assert.equal(res.statusCode, 204, res.body);
}

async function sessionOf(pageId: string, visitId: string): Promise<Json> {
  const items = ok(await t.req('GET', `/v0/pages/${pageId}/audience_sessions?limit=100`)).items as Json[];
  const found = items.find((s) => s.analyticsSessionId === visitId);
  assert.ok(found, `the session of ${visitId}`);
  return found;
}

async function landing(actions: Json[] = []): Promise<{ page: Json; audience: Json; path: string }> {
  const page = await publishedPage(t, { actions });
  const audience = await audienceOf(t, page.pageId);
  const path = unique('ch');
  await link(t, path, { targetType: 'audience', audienceId: audience.audienceId });
  return { page, audience, path };
}

/** What the landing URL's query would make the script send. */
function utmFields(query: string): Json {
  const q = new URLSearchParams(query);
  const fields: Json = {};
  for (const k of ['source', 'medium', 'campaign']) {
    const v = q.get(`utm_${k}`);
    if (v !== null) fields[`utm${k[0]?.toUpperCase()}${k.slice(1)}`] = v;
  }
  return fields;
}

// [what the visit says, its channel group, its channel]: GA4's rules in their order, each group at least once.
const CASES: [Json, string, string][] = [
  [{}, 'Direct', 'direct'],
  [{ referrer: 'https://HOST/elsewhere' }, 'Direct', 'direct'],
  [{ utmSource: 'linkedin', utmMedium: 'paid_social' }, 'Paid Social', 'paid'],
  [{ referrer: 'https://www.linkedin.com/', utmSource: 'LinkedIn', utmMedium: 'Paid_Social', utmCampaign: 'q4' }, 'Paid Social', 'paid'],
  [{ utmSource: 'facebook', utmMedium: 'cpm' }, 'Paid Social', 'paid'],
  [{ utmSource: 'google', utmMedium: 'cpc', utmCampaign: 'pmax cross-network' }, 'Cross-network', 'paid'],
  [{ utmSource: 'google', utmMedium: 'cpc', utmCampaign: 'spring-shop' }, 'Paid Shopping', 'paid'],
  [{ utmSource: 'amazon', utmMedium: 'ppc' }, 'Paid Shopping', 'paid'],
  [{ utmSource: 'google', utmMedium: 'cpc' }, 'Paid Search', 'paid'],
  [{ referrer: 'https://www.bing.com/', adClick: true }, 'Paid Search', 'paid'],
  [{ utmSource: 'youtube', utmMedium: 'paid-video' }, 'Paid Video', 'paid'],
  [{ utmSource: 'news-site', utmMedium: 'display' }, 'Display', 'paid'],
  [{ utmSource: 'partner', utmMedium: 'retargeting' }, 'Paid Other', 'paid'],
  [{ utmMedium: 'CPC' }, 'Paid Other', 'paid'],
  [{ adClick: true }, 'Paid Other', 'paid'],
  [{ referrer: 'https://www.ebay.com/itm/1' }, 'Organic Shopping', 'referral'],
  [{ utmSource: 'newsletter', utmMedium: 'email', utmCampaign: 'shopping-week' }, 'Organic Shopping', 'email'],
  [{ referrer: 'https://m.facebook.com/' }, 'Organic Social', 'social'],
  [{ utmSource: 'linkedin', utmMedium: 'newsletter' }, 'Organic Social', 'social'],
  [{ utmSource: 'club', utmMedium: 'social-network' }, 'Organic Social', 'social'],
  [{ referrer: 'https://www.youtube.com/' }, 'Organic Video', 'social'],
  [{ utmSource: 'webinar', utmMedium: 'video' }, 'Organic Video', 'direct'],
  [{ referrer: 'https://www.google.com/' }, 'Organic Search', 'search'],
  [{ utmSource: 'google', utmMedium: 'organic' }, 'Organic Search', 'search'],
  [{ utmSource: 'google' }, 'Organic Search', 'search'],
  [{ referrer: 'https://blog.example.org/post' }, 'Referral', 'referral'],
  [{ referrer: 'https://mail.google.com/' }, 'Referral', 'email'],
  [{ utmSource: 'partner-blog', utmMedium: 'referral' }, 'Referral', 'referral'],
  [{ utmSource: 'newsletter', utmMedium: 'email' }, 'Email', 'email'],
  [{ utmSource: 'e-mail', utmMedium: 'weekly' }, 'Email', 'email'],
  [{ utmSource: 'partner', utmMedium: 'affiliate' }, 'Affiliates', 'referral'],
  [{ utmSource: 'podcast', utmMedium: 'audio' }, 'Audio', 'direct'],
  [{ utmSource: 'sms', utmMedium: 'text' }, 'SMS', 'direct'],
  [{ utmSource: 'app', utmMedium: 'web_push' }, 'Mobile Push Notifications', 'direct'],
  [{ utmSource: 'firebase', utmMedium: 'inbox' }, 'Mobile Push Notifications', 'direct'],
  [{ utmSource: 'flyer', utmMedium: 'print' }, 'Unassigned', 'direct'],
  [{ utmCampaign: 'launch', referrer: 'https://blog.example.org/' }, 'Referral', 'referral'],
];

describe('GA4 default channel groups', () => {
  test('every group by its rule, through the collector: channelGroup and channel in the sessions API', async () => {
    assert.deepEqual(new Set(CASES.map((c) => c[1])), new Set(CHANNEL_GROUPS), 'every group is a case');
    const { page, path } = await landing();
    for (const [fields, group, channel] of CASES) {
      const served = await serve(path);
      const withHost = typeof fields.referrer === 'string' ? { ...fields, referrer: fields.referrer.replace('HOST', host) } : fields;
      await report(served, withHost);
      const session = await sessionOf(page.pageId, served.visitId);
      assert.deepEqual([session.channelGroup, session.channel], [group, channel], JSON.stringify(fields));
    }
  });

  test('a session posted through the API takes its groups from its UTM values; none: Direct', async () => {
    const { page, audience } = await landing();
    const post = async (utm: Json) =>
      ok(
        await t.req('POST', `/v0/pages/${page.pageId}/audience_sessions`, {
          audienceId: audience.audienceId,
          analyticsSessionId: unique('a'),
          pageUrl: 'https://example.com/x',
          sessionStartedAt: '2026-11-01T10:00:00Z',
          sessionEndedAt: '2026-11-01T10:01:00Z',
          ...utm,
        }),
        201,
      );
    const paid = await post({ utmSource: 'linkedin', utmMedium: 'paid_social' });
    assert.deepEqual([paid.channelGroup, paid.channel], ['Paid Social', 'paid']);
    const none = await post({});
    assert.deepEqual([none.channelGroup, none.channel], ['Direct', 'direct']);
  });

  test('a LinkedIn paid_social visit: Paid Social in the sessions API, the CSV, realtime, its lead and audience_session.created', async () => {
    const { page, path } = await landing([FORM_ACTION]);
    const served = await serve(`${path}${LINKEDIN_ADS}`);
    await report(served, utmFields(LINKEDIN_ADS));
    const session = await sessionOf(page.pageId, served.visitId);
    assert.deepEqual([session.channelGroup, session.channel, session.utmMedium], ['Paid Social', 'paid', 'paid_social']);

    const csv = await t.app.inject({
      method: 'GET',
      url: `/v0/pages/${page.pageId}/audience_sessions`,
      headers: { 'x-api-key': t.key, accept: 'text/csv' },
    });
    assert.equal(csv.statusCode, 200, csv.body);
    const [header = '', ...lines] = csv.body.trim().split('\r\n');
    const columns = header.split(',');
    const column = columns.indexOf('channelGroup');
    assert.equal(columns[column - 1], 'channel', 'beside channel');
    const row = lines.find((l) => l.includes(served.visitId))?.split(',');
    assert.equal(row?.[column], 'Paid Social');

    const realtime = ok(await t.req('GET', '/v0/analytics/realtime'));
    const live = (realtime.visits as Json[]).find((v) => v.audienceSessionId === session.audienceSessionId);
    assert.deepEqual([live?.channelGroup, live?.channel], ['Paid Social', 'paid']);

    const created = ok(await t.req('GET', '/v0/events?type=audience_session.created&limit=100')).items as Json[];
    const event = created.find((e) => e.payload.data.audienceSessionId === session.audienceSessionId);
    assert.equal(event?.payload.data.channelGroup, 'Paid Social');

    const hidden = (name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(served.html)?.[1] ?? '';
    const email = `${unique('lead').slice(1)}@example.com`;
    const posted = await visit(t, host, '/_pam/forms', {
      method: 'POST',
      remoteAddress: served.address,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': USER_AGENT },
      payload: new URLSearchParams({
        token: hidden('token'),
        action: hidden('action'),
        path: hidden('path'),
        name: 'Ada',
        email,
      }).toString(),
    });
    assert.equal(posted.statusCode, 303, posted.body);
    const lead = (ok(await t.req('GET', '/v0/leads?limit=100')).items as Json[]).find((l) => l.submittedEmail === email);
    assert.deepEqual([lead?.channelGroup, lead?.channel, lead?.audienceSessionId], ['Paid Social', 'paid', session.audienceSessionId]);
    const leadsCsv = await t.app.inject({ method: 'GET', url: '/v0/leads', headers: { 'x-api-key': t.key, accept: 'text/csv' } });
    assert.equal(leadsCsv.statusCode, 200);
    const [leadHeader = '', ...leadLines] = leadsCsv.body.trim().split('\r\n');
    const at = leadHeader.split(',').indexOf('channelGroup');
    assert.equal(leadLines.find((l) => l.includes(email))?.split(',')[at], 'Paid Social');
  });
});

describe('groupBy=channelGroup and visitor.channelGroup', () => {
  test('page, audience, pages and site analytics group by channelGroup; other values are refused', async () => {
    const { page, audience, path } = await landing();
    const visits: [string, Json][] = [
      [LINKEDIN_ADS, utmFields(LINKEDIN_ADS)],
      [LINKEDIN_ADS, utmFields(LINKEDIN_ADS)],
      ['?utm_source=google&utm_medium=cpc', { utmSource: 'google', utmMedium: 'cpc' }],
      ['', {}],
    ];
    for (const [query, fields] of visits) await report(await serve(`${path}${query}`), fields);
    const range = `startDate=${new Date(Date.now() - 86_400_000).toISOString()}&endDate=${new Date(Date.now() + 3_600_000).toISOString()}`;
    const groups = (body: Json) => Object.fromEntries((body.groups as Json[]).map((g) => [g.key, g.visits]));
    const expected = { 'Paid Social': 2, 'Paid Search': 1, Direct: 1 };
    assert.deepEqual(
      groups(ok(await t.req('GET', `/v0/pages/${page.pageId}/analytics?${range}&interval=hour&groupBy=channelGroup`))),
      expected,
    );
    assert.deepEqual(
      groups(ok(await t.req('GET', `/v0/pages/${page.pageId}/analytics?${range}&audienceId=${audience.audienceId}&groupBy=channelGroup`))),
      expected,
    );
    const labels = ok(await t.req('GET', `/v0/pages/${page.pageId}/analytics?${range}&groupBy=channelGroup`)).groups as Json[];
    assert.ok(labels.every((g) => g.label === g.key));
    const site = groups(ok(await t.req('GET', `/v0/analytics/site?${range}&groupBy=channelGroup`)));
    assert.ok(site['Paid Social'] >= 2 && site['Paid Search'] >= 1, JSON.stringify(site));
    const overview = ok(await t.req('GET', `/v0/analytics/pages?${range}&groupBy=channelGroup&limit=100`)).items as Json[];
    assert.deepEqual(groups(overview.find((p) => p.pageId === page.pageId) ?? { groups: [] }), expected);
    // channel stays, with paid social as paid.
    assert.deepEqual(groups(ok(await t.req('GET', `/v0/pages/${page.pageId}/analytics?${range}&groupBy=channel`))), {
      paid: 3,
      direct: 1,
    });
    expectProblem(await t.req('GET', `/v0/pages/${page.pageId}/analytics?groupBy=channelgroup`), 400, 'validation_failed');
    expectProblem(await t.req('GET', '/v0/analytics/site?groupBy=channel_group'), 400, 'validation_failed');
  });

  test('a segment on visitor.channelGroup serves its version to Paid Social visitors only', async () => {
    const content = (headline: string) => ({ headline, subheadline: '', sections: [] });
    const page = await publishedPage(t, { content: content('Everyone') });
    const path = unique('seg');
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    const rules = { match: 'all', conditions: [{ field: 'visitor.channelGroup', operator: 'equals', value: 'Paid Social' }] };
    const segment = await audienceOf(t, page.pageId, { customName: 'LinkedIn ads', rules, priority: 1 });
    const base = `/v0/pages/${page.pageId}/audiences/${segment.audienceId}/versions`;
    const v = ok(await t.req('POST', base, { content: content('From LinkedIn ads') }), 201);
    ok(await t.req('PATCH', `${base}/${v.versionId}`, { status: 'published' }));
    const h1 = async (query: string, referer?: string) =>
      /<h1>(.*?)<\/h1>/s.exec(
        (await visit(t, host, `${path}${query}`, { headers: { 'user-agent': USER_AGENT, ...(referer ? { referer } : {}) } })).body,
      )?.[1];
    assert.equal(await h1(LINKEDIN_ADS), 'From LinkedIn ads');
    assert.equal(await h1('?utm_source=linkedin&utm_medium=social'), 'Everyone', 'Organic Social');
    assert.equal(await h1('', 'https://www.linkedin.com/'), 'Everyone', 'a referral from LinkedIn: Organic Social');
    assert.equal(await h1(''), 'Everyone');

    // The other operators of a visitor string field, case-insensitive; a group GA4 does not have is refused at its pointer.
    const accepted = [
      { operator: 'in', value: ['paid social', 'Paid Search'] },
      { operator: 'starts_with', value: 'Paid' },
      { operator: 'not_equals', value: 'Direct' },
      { operator: 'exists' },
    ];
    for (const condition of accepted) {
      ok(
        await t.req('PATCH', `/v0/pages/${page.pageId}/audiences/${segment.audienceId}`, {
          rules: { match: 'all', conditions: [{ field: 'visitor.channelGroup', ...condition }] },
        }),
      );
    }
    const refused = await t.req('PATCH', `/v0/pages/${page.pageId}/audiences/${segment.audienceId}`, {
      rules: { match: 'all', conditions: [{ field: 'visitor.channelGroup', operator: 'equals', value: 'Paid TV' }] },
    });
    expectProblem(refused, 400, 'validation_failed', ['/rules/conditions/0/value']);
  });
});

describe('migration 0045', () => {
  test('stored visits are classed again from their referrer host and UTM values, and the rollups follow', async () => {
    const { page, path } = await landing();
    const linkedin = await serve(`${path}${LINKEDIN_ADS}`);
    await report(linkedin, utmFields(LINKEDIN_ADS));
    const clicked = await serve(path, 'https://www.google.com/');
    await report(clicked, { referrer: 'https://www.google.com/', adClick: true });
    const search = await serve(path, 'https://www.google.com/');
    await report(search, { referrer: 'https://www.google.com/' });

    // As the visits stood before: no channel group, and paid social filed as direct.
    const db = t.app.db as unknown as Kysely<unknown>;
    await channelGroups.down(db);
    await t.app.db.updateTable('audience_sessions').set({ channel: 'direct' }).where('visit_id', '=', linkedin.visitId).execute();
    await channelGroups.up(db);
    // As a start does after the migrations: PostgreSQL's collector is collect.sql's again, not 0045's.
    await applyCollectFunction(t.app.db);

    const classes = async (visitId: string) => {
      const s = await sessionOf(page.pageId, visitId);
      return [s.channelGroup, s.channel];
    };
    assert.deepEqual(await classes(linkedin.visitId), ['Paid Social', 'paid']);
    assert.deepEqual(await classes(clicked.visitId), ['Paid Search', 'paid'], 'a paid channel without a paid medium: an ad click');
    assert.deepEqual(await classes(search.visitId), ['Organic Search', 'search']);
    const range = `startDate=${new Date(Date.now() - 86_400_000).toISOString()}&endDate=${new Date(Date.now() + 3_600_000).toISOString()}`;
    const groups = (body: Json) => Object.fromEntries((body.groups as Json[]).map((g) => [g.key, g.visits]));
    const expected = { 'Paid Social': 1, 'Paid Search': 1, 'Organic Search': 1 };
    assert.deepEqual(
      groups(ok(await t.req('GET', `/v0/pages/${page.pageId}/analytics?${range}&interval=hour&groupBy=channelGroup`))),
      expected,
    );
    const site = groups(ok(await t.req('GET', `/v0/analytics/site?${range}&groupBy=channelGroup`)));
    assert.ok(site['Paid Social'] >= 1 && site['Organic Search'] >= 1, JSON.stringify(site));

    // The collector still writes after the migration (pam_collect replaced on PostgreSQL), and a later report adds to the same rows.
    const after = await serve(`${path}${LINKEDIN_ADS}`);
    await report(after, utmFields(LINKEDIN_ADS));
    await report(after, { ...utmFields(LINKEDIN_ADS), clicks: 3 });
    assert.deepEqual(await classes(after.visitId), ['Paid Social', 'paid']);
    assert.deepEqual(groups(ok(await t.req('GET', `/v0/pages/${page.pageId}/analytics?${range}&interval=hour&groupBy=channelGroup`))), {
      ...expected,
      'Paid Social': 2,
    });
  });
});
