import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, ok, startApp, type Json, type TestApp } from '../helpers.js';
import { audienceOf, fallbackHost, link, publishedPage, tokenIn, unique, viewClaims, visit } from '../site/serve-helpers.js';

// Issue 39: a holdout over one segment. Its visitors are split; control sees the page as everyone
// sees it (the home audience's version, else the page), and visitors of no segment are untouched.

let t: TestApp;
let host: string;
before(async () => {
  t = await startApp({ COLLECT_RATE_PER_MINUTE: '10000', FORM_RATE_PER_MINUTE: '10000' });
  host = await fallbackHost(t);
});
after(async () => {
  await t.close();
});

const ARMS = [
  { key: 'control', weight: 50 },
  { key: 'personalised', weight: 50 },
];
const LINKEDIN = { match: 'all', conditions: [{ field: 'utm.source', operator: 'equals', value: 'linkedin' }] };
const GOOGLE = { match: 'all', conditions: [{ field: 'utm.source', operator: 'equals', value: 'google' }] };
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const content = (headline: string) => ({ headline, subheadline: '', sections: [] });
const base = (pageId: string) => `/v0/pages/${pageId}/experiments`;
const h1 = (html: string) => /<h1>(.*?)<\/h1>/s.exec(html)?.[1] ?? '';
const claimsOf = (html: string): Json => viewClaims(tokenIn(html));

async function publish(pageId: string, audienceId: string, headline: string) {
  const url = `/v0/pages/${pageId}/audiences/${audienceId}/versions`;
  const v = ok(await t.req('POST', url, { content: content(headline) }), 201);
  ok(await t.req('PATCH', `${url}/${v.versionId}`, { status: 'published' }));
}

async function segment(pageId: string, name: string, rules: unknown) {
  const a = await audienceOf(t, pageId, { customName: name, rules, priority: 1 });
  await publish(pageId, a.audienceId, name);
  return a;
}

/** A published page at a link, with a LinkedIn segment and, when `home`, a home audience. */
async function setup(home: boolean) {
  const page = await publishedPage(t, { content: content('Everyone') });
  const path = unique('sx');
  await link(t, path, { targetType: 'page', pageId: page.pageId });
  const homeAudience = home ? await audienceOf(t, page.pageId, { flags: ['home_page'] }) : undefined;
  if (homeAudience) await publish(page.pageId, homeAudience.audienceId, 'Home');
  const linkedin = await segment(page.pageId, 'LinkedIn ads', LINKEDIN);
  return { page, path, home: homeAudience, linkedin };
}

async function holdout(pageId: string, audienceId: string, start = true) {
  const created = ok(await t.req('POST', base(pageId), { name: 'Segment holdout', kind: 'holdout', audienceId, arms: ARMS }), 201);
  if (start) ok(await t.req('POST', `${base(pageId)}/${created.experimentId}/start`));
  return created;
}

let n = 0;
const visitor = () => {
  n++;
  return { remoteAddress: `198.51.${100 + Math.floor(n / 250)}.${(n % 250) + 1}`, headers: { 'user-agent': BROWSER } };
};
async function see(path: string, who: ReturnType<typeof visitor>) {
  const res = await visit(t, host, path, who);
  assert.equal(res.statusCode, 200, res.body);
  return res.body as string;
}

describe('creating a holdout over a segment', () => {
  test('201 naming the segment; refusals at /audienceId for anything but a live segment of the page', async () => {
    const { page, home, linkedin } = await setup(true);
    const created = await holdout(page.pageId, linkedin.audienceId, false);
    assert.equal(created.audienceId, linkedin.audienceId);
    assert.equal(created.kind, 'holdout');
    assert.deepEqual(ok(await t.req('GET', `${base(page.pageId)}/${created.experimentId}`)).audienceId, linkedin.audienceId);

    const other = await publishedPage(t);
    const othersSegment = await audienceOf(t, other.pageId, { customName: 'Elsewhere', rules: LINKEDIN });
    const person = ok(await t.req('POST', '/v0/persons', { name: 'Ann Lee' }), 201);
    const personal = await audienceOf(t, page.pageId, { personId: person.personId });
    const plain = await audienceOf(t, page.pageId, { customName: 'No rules' });
    const tenantB = await t.newTenant('Segment B');
    const pageB = await publishedPage(t, {}, tenantB.key);
    const segmentB = await audienceOf(t, pageB.pageId, { customName: 'B', rules: LINKEDIN }, tenantB.key);
    const post = (audienceId: unknown, extra: Record<string, unknown> = {}) =>
      t.req('POST', base(page.pageId), { name: 'H', kind: 'holdout', audienceId, arms: ARMS, ...extra });
    const refused: [unknown, string][] = [
      [othersSegment.audienceId, "another page's segment"],
      [segmentB.audienceId, "another tenant's segment"],
      [personal.audienceId, "a person's audience"],
      [plain.audienceId, 'an audience without rules'],
      [home?.audienceId, 'the home audience'],
      ['audience_01h0000000000000000000000a', 'no such audience'],
      ['', 'empty'],
      ['a'.repeat(65), 'one past 64 characters'],
      [`${linkedin.audienceId}' or '1'='1`, 'hostile'],
      [`${linkedin.audienceId}\u0000`, 'a NUL'],
      [42, 'not a string'],
      [null, 'null'],
    ];
    for (const [audienceId, why] of refused) {
      const res = await post(audienceId);
      assert.equal(res.status, 400, `${why}: ${res.text}`);
      expectProblem(res, 400, 'validation_failed', ['/audienceId']);
    }
    // 64 characters, just inside the bound: refused for what it names, not for its length.
    expectProblem(await post('a'.repeat(64)), 400, 'validation_failed', ['/audienceId']);
    // Arms stay exactly control and personalised, naming no version.
    expectProblem(await post(linkedin.audienceId, { arms: [ARMS[0], { key: 'other', weight: 1 }] }), 400, 'validation_failed', ['/arms']);
    const withVersion = [ARMS[0], { ...ARMS[1], versionId: linkedin.publishedVersion.versionId }];
    expectProblem(await post(linkedin.audienceId, { arms: withVersion }), 400, 'validation_failed', ['/arms/1/versionId']);
    // An archived segment: 409 at creation, and at the start of a draft made before.
    const archived = await segment(page.pageId, 'Archived', GOOGLE);
    const draft = await holdout(page.pageId, archived.audienceId, false);
    ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences/${archived.audienceId}/archive`, {}));
    expectProblem(await post(archived.audienceId), 409, 'conflict', ['/audienceId']);
    expectProblem(await t.req('POST', `${base(page.pageId)}/${draft.experimentId}/start`), 409, 'conflict', ['/audienceId']);
    // A holdout without an audience is as before.
    assert.equal(ok(await t.req('POST', base(page.pageId), { name: 'All', kind: 'holdout', arms: ARMS }), 201).audienceId, null);
  });

  test('one running experiment per audience: a segment holdout against the page-wide holdout, the same segment, another segment', async () => {
    const { page, linkedin } = await setup(true);
    const google = await segment(page.pageId, 'Google ads', GOOGLE);
    const onLinkedin = await holdout(page.pageId, linkedin.audienceId);
    const start = (id: string) => t.req('POST', `${base(page.pageId)}/${id}/start`);
    const pageWide = ok(await t.req('POST', base(page.pageId), { name: 'All', kind: 'holdout', arms: ARMS }), 201);
    expectProblem(await start(pageWide.experimentId), 409, 'conflict');
    const again = await holdout(page.pageId, linkedin.audienceId, false);
    expectProblem(await start(again.experimentId), 409, 'conflict');
    const versions = ok(
      await t.req('POST', base(page.pageId), {
        name: 'V',
        kind: 'versions',
        audienceId: linkedin.audienceId,
        arms: [
          { key: 'a', weight: 1, versionId: (await draftOf(page.pageId, linkedin.audienceId)).versionId },
          { key: 'b', weight: 1, versionId: (await draftOf(page.pageId, linkedin.audienceId)).versionId },
        ],
      }),
      201,
    );
    expectProblem(await start(versions.experimentId), 409, 'conflict');
    // Another segment is another audience: its holdout runs beside.
    const onGoogle = await holdout(page.pageId, google.audienceId, false);
    assert.equal(ok(await start(onGoogle.experimentId)).status, 'running');
    ok(await t.req('POST', `${base(page.pageId)}/${onLinkedin.experimentId}/conclude`, { winner: 'personalised' }));
    ok(await t.req('POST', `${base(page.pageId)}/${onGoogle.experimentId}/conclude`, { winner: 'personalised' }));
    assert.equal(ok(await start(pageWide.experimentId)).status, 'running', 'the page-wide holdout once the segments are done');
  });
});

async function draftOf(pageId: string, audienceId: string) {
  return ok(await t.req('POST', `/v0/pages/${pageId}/audiences/${audienceId}/versions`, { content: content('Draft') }), 201);
}

describe('serving a holdout over a segment', () => {
  test('the segment is split; control sees the home version; other visitors and person links are untouched; results count both arms', {
    timeout: 120_000,
  }, async () => {
    const { page, path, linkedin } = await setup(true);
    const person = ok(await t.req('POST', '/v0/persons', { name: 'Ann Lee' }), 201);
    const personal = await audienceOf(t, page.pageId, { personId: person.personId });
    await publish(page.pageId, personal.audienceId, 'For Ann');
    const personPath = unique('ann');
    await link(t, personPath, { targetType: 'audience', audienceId: personal.audienceId });
    // Seen before the start: the segment's version, remembered and cached; the start shows at once.
    const early = visitor();
    assert.equal(h1(await see(`${path}?utm_source=linkedin`, early)), 'LinkedIn ads');
    const experiment = await holdout(page.pageId, linkedin.audienceId);

    const arms: Record<string, number> = { control: 0, personalised: 0 };
    for (let i = 0; i < 40; i++) {
      const who = i === 0 ? early : visitor();
      const html = await see(`${path}?utm_source=linkedin`, who);
      const claims = claimsOf(html);
      assert.equal(claims.experimentId, experiment.experimentId);
      assert.equal(claims.audienceId, linkedin.audienceId, 'the visit is the segment’s, in either arm');
      assert.match(claims.unit, /^v:/, 'a visitor of a segment is a daily visitor key');
      const arm = claims.arm as string;
      arms[arm] = (arms[arm] ?? 0) + 1;
      assert.equal(h1(html), arm === 'control' ? 'Home' : 'LinkedIn ads', arm);
      // The same visitor again: the same arm and the same page.
      const again = await see(`${path}?utm_source=linkedin`, who);
      assert.equal(claimsOf(again).arm, arm);
      assert.equal(h1(again), h1(html));
      const report = await visit(t, host, '/_pam/collect', {
        method: 'POST',
        ...who,
        headers: { ...who.headers, 'content-type': 'text/plain' },
        payload: JSON.stringify({ token: tokenIn(html), visibleMs: 1000, scroll: 10, clicks: 0, questions: 0, conversions: 0 }),
      });
      assert.equal(report.statusCode, 204, report.body);
    }
    assert.ok((arms.control ?? 0) >= 8 && (arms.personalised ?? 0) >= 8, JSON.stringify(arms));

    // A visitor of no segment: the home version, in no experiment; a person's link: its own version.
    for (const url of [path, `${path}?utm_source=google`]) {
      const html = await see(url, visitor());
      assert.equal(h1(html), 'Home');
      assert.equal(claimsOf(html).experimentId, undefined);
    }
    const annHtml = await see(`${personPath}?utm_source=linkedin`, visitor());
    assert.equal(h1(annHtml), 'For Ann');
    assert.equal(claimsOf(annHtml).experimentId, undefined, 'a person’s audience is not in a segment’s holdout');

    const results = ok(await t.req('GET', `${base(page.pageId)}/${experiment.experimentId}/results`));
    assert.equal(results.arms[0].key, 'control', 'control is the baseline');
    for (const arm of results.arms) assert.equal(arm.units, arms[arm.key], `${arm.key} units`);
    const sessions = ok(await t.req('GET', `/v0/pages/${page.pageId}/audience_sessions?limit=100`)).items as Json[];
    const inExperiment = sessions.filter((s) => s.experimentId === experiment.experimentId);
    assert.equal(inExperiment.length, 40);
    assert.ok(inExperiment.every((s) => s.audienceId === linkedin.audienceId));
    const analytics = ok(await t.req('GET', `/v0/pages/${page.pageId}/analytics?groupBy=arm`));
    const groups = Object.fromEntries((analytics.groups as Json[]).map((g) => [g.key, g.visits]));
    assert.equal(groups.control, arms.control);
    assert.equal(groups.personalised, arms.personalised);
  });

  test('control follows the home version at once; without a home audience it is the page; a control win holds until the segment changes', async () => {
    const { page, path, home, linkedin } = await setup(true);
    const experiment = await holdout(page.pageId, linkedin.audienceId);
    // Find a visitor in each arm.
    const inArm: Record<string, ReturnType<typeof visitor>> = {};
    for (let i = 0; i < 60 && !(inArm.control && inArm.personalised); i++) {
      const who = visitor();
      inArm[claimsOf(await see(`${path}?utm_source=linkedin`, who)).arm] ??= who;
    }
    const control = inArm.control;
    const personalised = inArm.personalised;
    assert.ok(control && personalised && home);
    await publish(page.pageId, home.audienceId, 'Home again');
    assert.equal(h1(await see(`${path}?utm_source=linkedin`, control)), 'Home again', 'the new home version on the next request');
    assert.equal(h1(await see(`${path}?utm_source=linkedin`, personalised)), 'LinkedIn ads');
    // Without a home audience, control sees the page itself.
    ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences/${home.audienceId}/archive`, {}));
    assert.equal(h1(await see(`${path}?utm_source=linkedin`, control)), 'Everyone');
    assert.equal(h1(await see(path, visitor())), 'Everyone', 'and so does a visitor of no segment');

    // Won by control: the segment's visitors see the page as everyone does, in no experiment, until the segment changes.
    ok(await t.req('POST', `${base(page.pageId)}/${experiment.experimentId}/conclude`, { winner: 'control' }));
    const held = await see(`${path}?utm_source=linkedin`, personalised);
    assert.equal(h1(held), 'Everyone');
    assert.equal(claimsOf(held).experimentId, undefined);
    await publish(page.pageId, linkedin.audienceId, 'LinkedIn v2');
    assert.equal(h1(await see(`${path}?utm_source=linkedin`, personalised)), 'LinkedIn v2', 'a new segment version ends the hold');
  });

  test('won by personalised, the segment is served as before; a person-wide control win does not hold a segment', async () => {
    const { page, path, linkedin } = await setup(true);
    const experiment = await holdout(page.pageId, linkedin.audienceId);
    ok(await t.req('POST', `${base(page.pageId)}/${experiment.experimentId}/conclude`, { winner: 'personalised' }));
    assert.equal(h1(await see(`${path}?utm_source=linkedin`, visitor())), 'LinkedIn ads');
    const pageWide = ok(await t.req('POST', base(page.pageId), { name: 'All', kind: 'holdout', arms: ARMS }), 201);
    ok(await t.req('POST', `${base(page.pageId)}/${pageWide.experimentId}/start`));
    const during = await see(`${path}?utm_source=linkedin`, visitor());
    assert.equal(h1(during), 'LinkedIn ads');
    assert.equal(claimsOf(during).experimentId, undefined, 'a page-wide holdout covers persons, not segments');
    ok(await t.req('POST', `${base(page.pageId)}/${pageWide.experimentId}/conclude`, { winner: 'control' }));
    assert.equal(h1(await see(`${path}?utm_source=linkedin`, visitor())), 'LinkedIn ads');
  });

  test('a lead in each arm: the pipeline report credits its account’s deal to the arm (groupBy=arm)', async () => {
    const page = await publishedPage(t, {
      content: content('Everyone'),
      actions: [{ purpose: 'lead', buttonTitle: 'Send', actionType: 'form', url: '' }],
    });
    const path = unique('lead');
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    const linkedin = await segment(page.pageId, 'LinkedIn ads', LINKEDIN);
    const experiment = await holdout(page.pageId, linkedin.audienceId);
    const start = Date.now();
    const expected: Record<string, number> = {};
    const hidden = (html: string, name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html)?.[1] ?? '';
    for (let i = 0; i < 8; i++) {
      const who = visitor();
      const html = await see(`${path}?utm_source=linkedin`, who);
      const arm = claimsOf(html).arm as string;
      const domain = `segarm${i}-${start.toString(36)}.example`;
      const posted = await visit(t, host, '/_pam/forms', {
        method: 'POST',
        ...who,
        headers: { ...who.headers, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          token: hidden(html, 'token'),
          action: hidden(html, 'action'),
          path: hidden(html, 'path'),
          name: `Lead ${i}`,
          email: `lead${i}@${domain}`,
        }).toString(),
      });
      assert.equal(posted.statusCode, 303, posted.body);
      const amount = (i + 1) * 100;
      expected[arm] = (expected[arm] ?? 0) + amount;
      const createdAt = new Date(start + 60_000).toISOString();
      ok(
        await t.req('POST', '/v0/deals', {
          source: 'api',
          name: `Deal ${i}`,
          stage: 'open',
          currency: 'EUR',
          amount,
          accountDomain: domain,
          createdAt,
          externalId: `seg-${start}-${i}`,
        }),
        201,
      );
    }
    const query = new URLSearchParams({
      startDate: new Date(start - 1000).toISOString(),
      endDate: new Date(start + 120_000).toISOString(),
      groupBy: 'arm',
      experimentId: experiment.experimentId,
    });
    const answer = ok(await t.req('GET', `/v0/analytics/pipeline?${query}`));
    assert.deepEqual(Object.fromEntries((answer.groups as Json[]).map((g) => [g.key, g.amount])), expected);
    const results = ok(await t.req('GET', `${base(page.pageId)}/${experiment.experimentId}/results`));
    const conversions = Object.fromEntries((results.arms as Json[]).map((a) => [a.key, a.conversions]));
    assert.equal((conversions.control ?? 0) + (conversions.personalised ?? 0), 8, 'each lead converts its unit');
  });
});
