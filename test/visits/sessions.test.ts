import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, ISO_MS, startApp, type Json, type Res, type TestApp } from '../helpers.js';

// Black-box tests of reference endpoint 5 (GET /v0/pages/{page_id}/audience_sessions) and the
// POST /v0/pages/{page_id}/audience_sessions extension, through HTTP only.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const SESSION_ID = /^session_[0-9a-z]{26}$/;
const SESSION_FIELDS = [
  'analyticsSessionId',
  // Extensions: the experiment and arm a visit was served in (null outside experiments).
  'arm',
  'audienceId',
  'audienceSessionId',
  // Extensions (issue 28): what the collector keeps of a visit; '' or direct for sessions posted here.
  'browser',
  'channel',
  'channelGroup',
  'country',
  'deviceType',
  'experimentId',
  'formSubmissionEmail',
  'formSubmissionId',
  'formSubmissionIdentifier',
  'formSubmissionPhone',
  'hasConversion',
  'hasFormSubmit',
  'isBounce',
  'maxScrollDepthPercentage',
  'os',
  'pageId',
  'pageTitle',
  'pageUrl',
  'questionsAskedCount',
  'referrerHost',
  'sessionEndedAt',
  'sessionStartedAt',
  'timeSpentSeconds',
  'totalClicksCount',
  'utmCampaign',
  'utmContent',
  'utmMedium',
  'utmSource',
  'utmTerm',
];
const STRING_FIELDS = [
  'formSubmissionId',
  'formSubmissionIdentifier',
  'formSubmissionEmail',
  'formSubmissionPhone',
  'utmCampaign',
  'utmContent',
  'utmMedium',
  'utmSource',
  'utmTerm',
];
const BOOLEAN_FIELDS = ['isBounce', 'hasFormSubmit', 'hasConversion'];
const COUNT_FIELDS = ['totalClicksCount', 'questionsAskedCount'];
const REQUIRED_FIELDS = ['audienceId', 'analyticsSessionId', 'pageUrl', 'sessionStartedAt', 'sessionEndedAt'];
const ENVELOPE_FIELDS = ['hasMore', 'items', 'nextCursor', 'totalCount'];

/** Well-formed ids that name nothing (TypeID body: first character 0-7). */
const UNKNOWN_PAGE = 'page_01h0000000000000000000000a';
const UNKNOWN_AUDIENCE = 'audience_01h0000000000000000000000a';

const START = '2026-03-01T08:00:00.000Z';
const END = '2026-03-01T08:01:30.500Z';

type Opts = { key?: string };
const withKey = (key?: string) => (key === undefined ? {} : { key });

async function newPage(title = 'Landing title', key?: string): Promise<string> {
  const res = await t.req('POST', '/v0/pages', { name: `Page ${title}`, title, pageContext: 'ctx', pageType: 'inbound' }, withKey(key));
  assert.equal(res.status, 201, res.text);
  return res.body.pageId;
}

async function newAudience(pageId: string, key?: string): Promise<string> {
  const res = await t.req('POST', `/v0/pages/${pageId}/audiences`, {}, withKey(key));
  assert.equal(res.status, 201, res.text);
  return res.body.audienceId;
}

/** A page with one audience. */
async function setup(title = 'Landing title', key?: string): Promise<{ pageId: string; audienceId: string }> {
  const pageId = await newPage(title, key);
  return { pageId, audienceId: await newAudience(pageId, key) };
}

const baseBody = (audienceId: string, extra: Json = {}): Json => ({
  audienceId,
  analyticsSessionId: 'analytics-1',
  pageUrl: 'https://example.com/landing',
  sessionStartedAt: START,
  sessionEndedAt: END,
  ...extra,
});

const postSession = (pageId: string, body: Json, opts: Opts = {}): Promise<Res> =>
  t.req('POST', `/v0/pages/${pageId}/audience_sessions`, body, withKey(opts.key));

async function record(pageId: string, audienceId: string, extra: Json = {}, opts: Opts = {}): Promise<Json> {
  const res = await postSession(pageId, baseBody(audienceId, extra), opts);
  assert.equal(res.status, 201, res.text);
  return res.body;
}

/** A session starting at `start`, ending one minute later. */
const at = (pageId: string, audienceId: string, start: string, extra: Json = {}) =>
  record(pageId, audienceId, { sessionStartedAt: start, sessionEndedAt: new Date(Date.parse(start) + 60_000).toISOString(), ...extra });

function list(pageId: string, query: Record<string, string | number> = {}, opts: Opts = {}): Promise<Res> {
  const qs = Object.entries(query)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
    .join('&');
  return t.req('GET', `/v0/pages/${pageId}/audience_sessions${qs ? `?${qs}` : ''}`, undefined, withKey(opts.key));
}

async function listOk(pageId: string, query: Record<string, string | number> = {}, opts: Opts = {}): Promise<Json> {
  const res = await list(pageId, query, opts);
  assertJson(res, 200);
  assert.deepEqual(Object.keys(res.body).sort(), ENVELOPE_FIELDS);
  return res.body;
}

/** Every page of a list, walked with `limit`; checks the envelope of each page on the way. */
async function walk(
  pageId: string,
  query: Record<string, string | number>,
  limit: number,
  opts: Opts = {},
): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  let total: number | null = null;
  do {
    const body: Json = await listOk(pageId, { ...query, limit, ...(cursor === null ? {} : { cursor }) }, opts);
    pages++;
    assert.ok(body.items.length <= limit);
    assert.ok(body.items.length > 0, 'no empty page while walking');
    if (total === null) total = body.totalCount;
    assert.equal(body.totalCount, total, 'totalCount is the same on every page');
    cursor = body.nextCursor;
    assert.equal(body.hasMore, cursor !== null);
    if (cursor !== null) assert.equal(body.items.length, limit, 'only the last page is short');
    ids.push(...body.items.map((s: Json) => s.audienceSessionId));
    assert.ok(pages < 50, 'pagination does not end');
  } while (cursor !== null);
  assert.equal(ids.length, total);
  return { ids, pages };
}

function assertJson(res: Res, status: number): void {
  assert.equal(res.status, status, res.text);
  assert.match(String(res.headers['content-type']), /^application\/json/);
}

function assertSessionShape(s: Json): void {
  assert.deepEqual(Object.keys(s).sort(), SESSION_FIELDS);
  assert.match(s.audienceSessionId, SESSION_ID);
  for (const f of ['analyticsSessionId', 'audienceId', 'pageId', 'pageTitle', 'pageUrl', ...STRING_FIELDS]) {
    assert.equal(typeof s[f], 'string', f);
  }
  assert.match(s.sessionStartedAt, ISO_MS);
  assert.match(s.sessionEndedAt, ISO_MS);
  for (const f of ['timeSpentSeconds', 'maxScrollDepthPercentage', ...COUNT_FIELDS]) assert.equal(typeof s[f], 'number', f);
  for (const f of COUNT_FIELDS) assert.ok(Number.isInteger(s[f]) && s[f] >= 0, f);
  for (const f of BOOLEAN_FIELDS) assert.equal(typeof s[f], 'boolean', f);
}

/** Newest sessionStartedAt first, ties by id (newest id first). */
const expectedOrder = (sessions: Json[]): string[] =>
  [...sessions]
    .sort((a, b) =>
      a.sessionStartedAt === b.sessionStartedAt
        ? a.audienceSessionId < b.audienceSessionId
          ? 1
          : -1
        : a.sessionStartedAt < b.sessionStartedAt
          ? 1
          : -1,
    )
    .map((s) => s.audienceSessionId);

describe('POST /v0/pages/{page_id}/audience_sessions', () => {
  test('201 with every field, defaults for every optional field, pageId and pageTitle from the page', async () => {
    const { pageId, audienceId } = await setup('Welcome, visitor');
    const res = await postSession(pageId, baseBody(audienceId));
    assertJson(res, 201);
    const s = res.body;
    assertSessionShape(s);
    assert.deepEqual(
      { ...s, audienceSessionId: 'x' },
      {
        audienceSessionId: 'x',
        analyticsSessionId: 'analytics-1',
        audienceId,
        pageId,
        pageTitle: 'Welcome, visitor',
        pageUrl: 'https://example.com/landing',
        sessionStartedAt: START,
        sessionEndedAt: END,
        timeSpentSeconds: 90.5,
        maxScrollDepthPercentage: 0,
        totalClicksCount: 0,
        questionsAskedCount: 0,
        isBounce: false,
        hasFormSubmit: false,
        hasConversion: false,
        formSubmissionId: '',
        formSubmissionIdentifier: '',
        formSubmissionEmail: '',
        formSubmissionPhone: '',
        utmCampaign: '',
        utmContent: '',
        utmMedium: '',
        utmSource: '',
        utmTerm: '',
        experimentId: null,
        arm: null,
        referrerHost: '',
        channel: 'direct',
        channelGroup: 'Direct',
        deviceType: '',
        browser: '',
        os: '',
        country: '',
      },
    );
    assert.ok(res.headers['x-request-id']);
  });

  test('every optional field given is stored and echoed exactly, and the list returns the same object', async () => {
    const { pageId, audienceId } = await setup();
    const extra = {
      timeSpentSeconds: 12.25,
      maxScrollDepthPercentage: 55.5,
      totalClicksCount: 7,
      questionsAskedCount: 3,
      isBounce: true,
      hasFormSubmit: true,
      hasConversion: true,
      formSubmissionId: 'sub-1',
      formSubmissionIdentifier: 'ident-1',
      formSubmissionEmail: 'jane@example.com',
      formSubmissionPhone: '+14155550100',
      utmCampaign: 'spring',
      utmContent: 'banner',
      utmMedium: 'email',
      utmSource: 'newsletter',
      utmTerm: 'pages',
    };
    const s = await record(pageId, audienceId, { analyticsSessionId: 'ga-42', pageUrl: 'https://example.com/x?y=1', ...extra });
    assertSessionShape(s);
    for (const [k, v] of Object.entries(extra)) assert.deepEqual(s[k], v, k);
    assert.equal(s.analyticsSessionId, 'ga-42');
    assert.equal(s.pageUrl, 'https://example.com/x?y=1');
    const listed = await listOk(pageId);
    assert.equal(listed.totalCount, 1);
    assert.deepEqual(listed.items, [s]);
  });

  test('ids are distinct session ids and sort in creation order', async () => {
    const { pageId, audienceId } = await setup();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await record(pageId, audienceId)).audienceSessionId);
    assert.equal(new Set(ids).size, 4);
    assert.deepEqual([...ids].sort(), ids);
  });

  test('timeSpentSeconds defaults to end - start in seconds; a given value is kept as is', async () => {
    const { pageId, audienceId } = await setup();
    assert.equal((await record(pageId, audienceId)).timeSpentSeconds, 90.5);
    const hour = await record(pageId, audienceId, { sessionStartedAt: '2026-03-01T00:00:00Z', sessionEndedAt: '2026-03-01T01:00:00.001Z' });
    assert.equal(hour.timeSpentSeconds, 3600.001);
    // A given value wins even when it differs from the difference of the times.
    assert.equal((await record(pageId, audienceId, { timeSpentSeconds: 12.25 })).timeSpentSeconds, 12.25);
    assert.equal((await record(pageId, audienceId, { timeSpentSeconds: 0 })).timeSpentSeconds, 0);
    assert.equal((await record(pageId, audienceId, { timeSpentSeconds: 100000 })).timeSpentSeconds, 100000);
  });

  test('sessionEndedAt equal to sessionStartedAt is accepted (timeSpentSeconds 0); before it is 400 at /sessionEndedAt', async () => {
    const { pageId, audienceId } = await setup();
    const same = await record(pageId, audienceId, { sessionStartedAt: START, sessionEndedAt: START });
    assert.equal(same.sessionEndedAt, START);
    assert.equal(same.timeSpentSeconds, 0);
    const res = await postSession(pageId, baseBody(audienceId, { sessionStartedAt: START, sessionEndedAt: '2026-03-01T07:59:59.999Z' }));
    expectProblem(res, 400, 'validation_failed', ['/sessionEndedAt']);
    assert.equal((await listOk(pageId)).totalCount, 1, 'the refused session was not stored');
  });

  test('end before start is judged on the instants, not on the text', async () => {
    const { pageId, audienceId } = await setup();
    // 10:00+02:00 is 08:00Z; an end of 09:00Z is after it although "09" < "10".
    const ok = await record(pageId, audienceId, { sessionStartedAt: '2026-03-01T10:00:00+02:00', sessionEndedAt: '2026-03-01T09:00:00Z' });
    assert.equal(ok.sessionStartedAt, '2026-03-01T08:00:00.000Z');
    assert.equal(ok.sessionEndedAt, '2026-03-01T09:00:00.000Z');
    assert.equal(ok.timeSpentSeconds, 3600);
    // 09:00+02:00 is 07:00Z: before a start of 08:00Z although "09" > "08".
    const res = await postSession(
      pageId,
      baseBody(audienceId, { sessionStartedAt: '2026-03-01T08:00:00Z', sessionEndedAt: '2026-03-01T09:00:00+02:00' }),
    );
    expectProblem(res, 400, 'validation_failed', ['/sessionEndedAt']);
  });

  test('instants with an offset are returned in UTC with milliseconds', async () => {
    const { pageId, audienceId } = await setup();
    const s = await record(pageId, audienceId, {
      sessionStartedAt: '2026-03-01T10:00:00+02:00',
      sessionEndedAt: '2026-03-01T09:01:30.5+01:00',
    });
    assert.equal(s.sessionStartedAt, '2026-03-01T08:00:00.000Z');
    assert.equal(s.sessionEndedAt, '2026-03-01T08:01:30.500Z');
    assert.equal(s.timeSpentSeconds, 90.5);
    const west = await record(pageId, audienceId, {
      sessionStartedAt: '2026-12-31T23:30:00-05:30',
      sessionEndedAt: '2027-01-01T05:00:00.25Z',
    });
    assert.equal(west.sessionStartedAt, '2027-01-01T05:00:00.000Z');
    assert.equal(west.sessionEndedAt, '2027-01-01T05:00:00.250Z');
    assert.equal(west.timeSpentSeconds, 0.25);
    const zero = await record(pageId, audienceId, {
      sessionStartedAt: '2026-03-01T08:00:00+00:00',
      sessionEndedAt: '2026-03-01T08:00:01-00:00',
    });
    assert.equal(zero.sessionStartedAt, '2026-03-01T08:00:00.000Z');
    assert.equal(zero.sessionEndedAt, '2026-03-01T08:00:01.000Z');
    // More than three fractional digits: still returned with exactly three.
    const fine = await record(pageId, audienceId, {
      sessionStartedAt: '2026-03-01T08:00:00.123456Z',
      sessionEndedAt: '2026-03-01T08:00:01.5Z',
    });
    assert.equal(fine.sessionStartedAt, '2026-03-01T08:00:00.123Z');
    assert.equal(fine.sessionEndedAt, '2026-03-01T08:00:01.500Z');
    // The list answers the same normalised values.
    const listed = await listOk(pageId, { limit: 100 });
    for (const item of listed.items) {
      assert.match(item.sessionStartedAt, ISO_MS);
      assert.match(item.sessionEndedAt, ISO_MS);
    }
    assert.deepEqual(
      listed.items.find((i: Json) => i.audienceSessionId === s.audienceSessionId),
      s,
    );
  });

  for (const [label, instant] of [
    ['before year 0000 in UTC', '0000-01-01T00:30:00+01:00'],
    ['after year 9999 in UTC', '9999-12-31T23:30:00-01:00'],
  ] as const) {
    test(`an instant that falls ${label} once normalised is refused with 400 or returned as ISO 8601 UTC with milliseconds`, async () => {
      const { pageId, audienceId } = await setup();
      const res = await postSession(pageId, baseBody(audienceId, { sessionStartedAt: instant, sessionEndedAt: instant }));
      if (res.status === 400) {
        expectProblem(res, 400, 'validation_failed', ['/sessionStartedAt']);
        return;
      }
      assertJson(res, 201);
      assert.match(res.body.sessionStartedAt, ISO_MS, `${instant} -> ${res.body.sessionStartedAt}`);
      assert.match(res.body.sessionEndedAt, ISO_MS, `${instant} -> ${res.body.sessionEndedAt}`);
    });
  }

  test('each required field missing is 400 at its own path; all missing names all of them', async () => {
    const { pageId, audienceId } = await setup();
    for (const field of REQUIRED_FIELDS) {
      const body = baseBody(audienceId);
      delete body[field];
      expectProblem(await postSession(pageId, body), 400, 'validation_failed', [`/${field}`]);
    }
    const res = await postSession(pageId, {});
    expectProblem(
      res,
      400,
      'validation_failed',
      REQUIRED_FIELDS.map((f) => `/${f}`),
    );
    assert.equal((await listOk(pageId)).totalCount, 0);
  });

  test('analyticsSessionId and pageUrl must be non-empty', async () => {
    const { pageId, audienceId } = await setup();
    expectProblem(await postSession(pageId, baseBody(audienceId, { analyticsSessionId: '' })), 400, 'validation_failed', [
      '/analyticsSessionId',
    ]);
    expectProblem(await postSession(pageId, baseBody(audienceId, { pageUrl: '' })), 400, 'validation_failed', ['/pageUrl']);
    const one = await record(pageId, audienceId, { analyticsSessionId: 'a', pageUrl: 'b' });
    assert.equal(one.analyticsSessionId, 'a');
    assert.equal(one.pageUrl, 'b');
  });

  test('malformed date-times are 400 at their path', async () => {
    const { pageId, audienceId } = await setup();
    const bad = [
      '2026-03-01T08:00:00', // no zone
      '2026-03-01T08:00:00.000', // no zone
      'yesterday',
      '2026-13-01T00:00:00Z', // month 13
      '2026-02-30T00:00:00Z', // no such day
      '2026-02-29T00:00:00Z', // 2026 is not a leap year
      '2026-03-01T24:00:01Z',
      '2026-03-01T08:60:00Z',
      '2026-03-01', // a date, not a date-time
      '1772352000000', // epoch milliseconds
      'Sun, 01 Mar 2026 08:00:00 GMT', // RFC 7231, not RFC 3339
      '',
    ];
    for (const value of bad) {
      expectProblem(
        await postSession(pageId, baseBody(audienceId, { sessionStartedAt: value, sessionEndedAt: '2027-01-01T00:00:00Z' })),
        400,
        'validation_failed',
        ['/sessionStartedAt'],
      );
      expectProblem(await postSession(pageId, baseBody(audienceId, { sessionEndedAt: value })), 400, 'validation_failed', [
        '/sessionEndedAt',
      ]);
    }
    // Not a string at all.
    expectProblem(await postSession(pageId, baseBody(audienceId, { sessionStartedAt: 1772352000000 })), 400, 'validation_failed', [
      '/sessionStartedAt',
    ]);
    expectProblem(await postSession(pageId, baseBody(audienceId, { sessionEndedAt: null })), 400, 'validation_failed', ['/sessionEndedAt']);
    // A leap day of a leap year is fine.
    const leap = await record(pageId, audienceId, { sessionStartedAt: '2028-02-29T12:00:00Z', sessionEndedAt: '2028-02-29T12:00:00Z' });
    assert.equal(leap.sessionStartedAt, '2028-02-29T12:00:00.000Z');
    assert.equal((await listOk(pageId)).totalCount, 1);
  });

  test('maxScrollDepthPercentage: 0, 100 and fractions inside are accepted; -0.1 and 100.1 are 400', async () => {
    const { pageId, audienceId } = await setup();
    for (const v of [0, 100, 0.1, 99.9, 42]) {
      assert.equal((await record(pageId, audienceId, { maxScrollDepthPercentage: v })).maxScrollDepthPercentage, v);
    }
    for (const v of [-0.1, 100.1, -1, 101, '50', null, true]) {
      expectProblem(await postSession(pageId, baseBody(audienceId, { maxScrollDepthPercentage: v })), 400, 'validation_failed', [
        '/maxScrollDepthPercentage',
      ]);
    }
  });

  test('counts: integers >= 0 accepted (large ones too), -1, 1.5 and non-numbers are 400', async () => {
    const { pageId, audienceId } = await setup();
    for (const f of COUNT_FIELDS) {
      assert.equal((await record(pageId, audienceId, { [f]: 0 }))[f], 0);
      assert.equal((await record(pageId, audienceId, { [f]: 1 }))[f], 1);
      assert.equal((await record(pageId, audienceId, { [f]: 3_000_000_000 }))[f], 3_000_000_000);
      for (const v of [-1, 1.5, '3', null, false]) {
        expectProblem(await postSession(pageId, baseBody(audienceId, { [f]: v })), 400, 'validation_failed', [`/${f}`]);
      }
    }
  });

  test('timeSpentSeconds: a number >= 0; negative or not a number is 400', async () => {
    const { pageId, audienceId } = await setup();
    assert.equal((await record(pageId, audienceId, { timeSpentSeconds: 0.001 })).timeSpentSeconds, 0.001);
    for (const v of [-0.001, -1, '5', null]) {
      expectProblem(await postSession(pageId, baseBody(audienceId, { timeSpentSeconds: v })), 400, 'validation_failed', [
        '/timeSpentSeconds',
      ]);
    }
  });

  test('booleans and strings of the wrong type, or null, are 400 at the field', async () => {
    const { pageId, audienceId } = await setup();
    for (const f of BOOLEAN_FIELDS) {
      for (const v of ['true', 1, null]) {
        expectProblem(await postSession(pageId, baseBody(audienceId, { [f]: v })), 400, 'validation_failed', [`/${f}`]);
      }
    }
    for (const f of [...STRING_FIELDS, 'analyticsSessionId', 'pageUrl', 'audienceId']) {
      for (const v of [5, null, ['x']]) {
        expectProblem(await postSession(pageId, baseBody(audienceId, { [f]: v })), 400, 'validation_failed', [`/${f}`]);
      }
    }
    assert.equal((await listOk(pageId)).totalCount, 0);
  });

  test('an unknown field is 400 at its own path, including response-only fields', async () => {
    const { pageId, audienceId } = await setup();
    expectProblem(await postSession(pageId, baseBody(audienceId, { referrer: 'x' })), 400, 'validation_failed', ['/referrer']);
    expectProblem(await postSession(pageId, baseBody(audienceId, { pageTitle: 'Mine' })), 400, 'validation_failed', ['/pageTitle']);
    expectProblem(await postSession(pageId, baseBody(audienceId, { pageId })), 400, 'validation_failed', ['/pageId']);
    expectProblem(
      await postSession(pageId, baseBody(audienceId, { audienceSessionId: 'session_01h0000000000000000000000a' })),
      400,
      'validation_failed',
      ['/audienceSessionId'],
    );
    assert.equal((await listOk(pageId)).totalCount, 0);
  });

  test('bad JSON, a non-object body and a non-JSON content type are refused', async () => {
    const { pageId, audienceId } = await setup();
    expectProblem(await postSession(pageId, '{"audienceId": '), 400, 'validation_failed');
    expectProblem(await postSession(pageId, '[]'), 400, 'validation_failed');
    const res = await t.req('POST', `/v0/pages/${pageId}/audience_sessions`, JSON.stringify(baseBody(audienceId)), {
      headers: { 'content-type': 'text/plain' },
    });
    expectProblem(res, 415, 'unsupported_media_type');
  });

  test('audienceId that is not an audience of this page is 400 at /audienceId', async () => {
    const { pageId } = await setup();
    const other = await setup('Other page');
    expectProblem(await postSession(pageId, baseBody(other.audienceId)), 400, 'validation_failed', ['/audienceId']);
    expectProblem(await postSession(pageId, baseBody(UNKNOWN_AUDIENCE)), 400, 'validation_failed', ['/audienceId']);
    expectProblem(await postSession(pageId, baseBody('not-an-id')), 400, 'validation_failed', ['/audienceId']);
    expectProblem(await postSession(pageId, baseBody('')), 400, 'validation_failed', ['/audienceId']);
    // Another tenant's audience.
    const { key } = await t.newTenant('Sessions foreign audience');
    const foreign = await setup('Foreign', key);
    expectProblem(await postSession(pageId, baseBody(foreign.audienceId)), 400, 'validation_failed', ['/audienceId']);
    assert.equal((await listOk(pageId)).totalCount, 0);
    assert.equal((await listOk(other.pageId)).totalCount, 0);
  });

  test('pageTitle is the title of the page the session is recorded on (not its name); a page update leaves it', async () => {
    const first = await setup('First title');
    const second = await setup('Second title');
    const a = await record(first.pageId, first.audienceId);
    const b = await record(second.pageId, second.audienceId);
    assert.equal(a.pageTitle, 'First title');
    assert.equal(a.pageId, first.pageId);
    assert.equal(b.pageTitle, 'Second title');
    assert.equal(b.pageId, second.pageId);
    // The title is not updatable (reference endpoint 2); a name change does not touch pageTitle.
    const patched = await t.req('PATCH', `/v0/pages/${first.pageId}`, { name: 'Renamed page' });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.title, 'First title');
    const c = await record(first.pageId, first.audienceId);
    assert.equal(c.pageTitle, 'First title');
    const listed = await listOk(first.pageId);
    assert.deepEqual(
      listed.items.map((s: Json) => s.pageTitle),
      ['First title', 'First title'],
    );
  });

  test('unknown, malformed or deleted page is 404', async () => {
    const { pageId, audienceId } = await setup();
    expectProblem(await postSession(UNKNOWN_PAGE, baseBody(audienceId)), 404, 'not_found');
    expectProblem(await postSession('nope', baseBody(audienceId)), 404, 'not_found');
    await record(pageId, audienceId);
    const del = await t.req('DELETE', `/v0/pages/${pageId}`);
    assert.equal(del.status, 204, del.text);
    expectProblem(await postSession(pageId, baseBody(audienceId)), 404, 'not_found');
    expectProblem(await list(pageId), 404, 'not_found');
  });

  test("another tenant's page is 404, and its sessions stay its own", async () => {
    const { pageId, audienceId } = await setup();
    const { key } = await t.newTenant('Sessions intruder');
    expectProblem(await postSession(pageId, baseBody(audienceId), { key }), 404, 'not_found');
    expectProblem(await list(pageId, {}, { key }), 404, 'not_found');
    expectProblem(await list(pageId, { audienceId }, { key }), 404, 'not_found');
    assert.equal((await listOk(pageId)).totalCount, 0);
    // The owner sees what it records; the other tenant still cannot.
    await record(pageId, audienceId);
    expectProblem(await list(pageId, {}, { key }), 404, 'not_found');
    // The other tenant's own page with its own sessions.
    const theirs = await setup('Theirs', key);
    const s = await record(theirs.pageId, theirs.audienceId, {}, { key });
    const listed = await listOk(theirs.pageId, {}, { key });
    assert.deepEqual(
      listed.items.map((i: Json) => i.audienceSessionId),
      [s.audienceSessionId],
    );
    expectProblem(await list(theirs.pageId), 404, 'not_found');
    expectProblem(await postSession(theirs.pageId, baseBody(theirs.audienceId)), 404, 'not_found');
  });

  test('without an API key: 401', async () => {
    const { pageId, audienceId } = await setup();
    expectProblem(await t.req('POST', `/v0/pages/${pageId}/audience_sessions`, baseBody(audienceId), { key: null }), 401, 'unauthorized');
    expectProblem(await t.req('GET', `/v0/pages/${pageId}/audience_sessions`, undefined, { key: null }), 401, 'unauthorized');
  });
});

describe('GET /v0/pages/{page_id}/audience_sessions', () => {
  test('empty page: exact envelope with no items', async () => {
    const { pageId } = await setup();
    const body = await listOk(pageId);
    assert.deepEqual(body, { items: [], hasMore: false, nextCursor: null, totalCount: 0 });
  });

  test('ordered by sessionStartedAt newest first (not by creation), ties by id', async () => {
    const { pageId, audienceId } = await setup();
    const b = await at(pageId, audienceId, '2026-04-02T00:00:00.000Z');
    const a = await at(pageId, audienceId, '2026-04-01T00:00:00.000Z');
    const d = await at(pageId, audienceId, '2026-04-04T00:00:00.000Z');
    const c1 = await at(pageId, audienceId, '2026-04-03T00:00:00.000Z');
    const c2 = await at(pageId, audienceId, '2026-04-03T00:00:00.000Z');
    // Ordered by the instant, not by the text sent: 10:00+05:00 is 05:00Z, before 06:00Z.
    const e = await record(pageId, audienceId, {
      sessionStartedAt: '2026-04-05T10:00:00+05:00',
      sessionEndedAt: '2026-04-05T10:00:00+05:00',
    });
    const f = await record(pageId, audienceId, { sessionStartedAt: '2026-04-05T06:00:00Z', sessionEndedAt: '2026-04-05T06:00:00Z' });
    const body = await listOk(pageId);
    assert.equal(body.totalCount, 7);
    assert.equal(body.hasMore, false);
    assert.equal(body.nextCursor, null);
    assert.deepEqual(
      body.items.map((s: Json) => s.audienceSessionId),
      [f, e, d, c2, c1, b, a].map((s) => s.audienceSessionId),
    );
    for (const s of body.items) assertSessionShape(s);
  });

  test('sessions of other pages never appear', async () => {
    const mine = await setup('Mine');
    const other = await setup('Other');
    const s1 = await at(mine.pageId, mine.audienceId, '2026-05-01T00:00:00Z');
    await at(other.pageId, other.audienceId, '2026-05-02T00:00:00Z');
    await at(other.pageId, other.audienceId, '2026-05-01T00:00:00Z');
    const body = await listOk(mine.pageId, { startDate: '2026-01-01T00:00:00Z', endDate: '2027-01-01T00:00:00Z' });
    assert.deepEqual(
      body.items.map((s: Json) => s.audienceSessionId),
      [s1.audienceSessionId],
    );
    assert.equal(body.totalCount, 1);
    assert.equal((await listOk(other.pageId)).totalCount, 2);
  });

  describe('date filters', () => {
    let pageId: string;
    const s: Record<string, Json> = {};
    before(async () => {
      ({ pageId } = await setup('Dates'));
      const audienceId = await newAudience(pageId);
      s.before = await at(pageId, audienceId, '2026-06-01T09:59:59.999Z');
      s.atStart = await at(pageId, audienceId, '2026-06-01T10:00:00.000Z');
      s.middle = await at(pageId, audienceId, '2026-06-01T11:00:00.000Z');
      s.justBeforeEnd = await at(pageId, audienceId, '2026-06-01T11:59:59.999Z');
      s.atEnd = await at(pageId, audienceId, '2026-06-01T12:00:00.000Z');
      s.after = await at(pageId, audienceId, '2026-06-01T13:00:00.000Z');
    });
    const ids = (body: Json) => body.items.map((i: Json) => i.audienceSessionId);
    const of = (...names: string[]) => names.map((n) => s[n].audienceSessionId);

    test('startDate is inclusive, endDate exclusive', async () => {
      const body = await listOk(pageId, { startDate: '2026-06-01T10:00:00.000Z', endDate: '2026-06-01T12:00:00.000Z' });
      assert.deepEqual(ids(body), of('justBeforeEnd', 'middle', 'atStart'));
      assert.equal(body.totalCount, 3);
      assert.equal(body.hasMore, false);
    });

    test('startDate alone and endDate alone', async () => {
      const from = await listOk(pageId, { startDate: '2026-06-01T12:00:00Z' });
      assert.deepEqual(ids(from), of('after', 'atEnd'));
      assert.equal(from.totalCount, 2);
      const until = await listOk(pageId, { endDate: '2026-06-01T10:00:00Z' });
      assert.deepEqual(ids(until), of('before'));
      assert.equal(until.totalCount, 1);
      const all = await listOk(pageId);
      assert.equal(all.totalCount, 6);
    });

    test('one millisecond either side of the boundaries', async () => {
      const body = await listOk(pageId, { startDate: '2026-06-01T10:00:00.001Z', endDate: '2026-06-01T11:59:59.999Z' });
      assert.deepEqual(ids(body), of('middle'));
      const wide = await listOk(pageId, { startDate: '2026-06-01T09:59:59.999Z', endDate: '2026-06-01T12:00:00.001Z' });
      assert.deepEqual(ids(wide), of('atEnd', 'justBeforeEnd', 'middle', 'atStart', 'before'));
    });

    test('filter bounds with an offset are the same instants', async () => {
      // 12:00+02:00 is 10:00Z (inclusive); 13:00+01:00 is 12:00Z (exclusive).
      const body = await listOk(pageId, { startDate: '2026-06-01T12:00:00+02:00', endDate: '2026-06-01T13:00:00+01:00' });
      assert.deepEqual(ids(body), of('justBeforeEnd', 'middle', 'atStart'));
      const west = await listOk(pageId, { startDate: '2026-06-01T06:00:00-04:00', endDate: '2026-06-01T06:30:00-05:30' });
      assert.deepEqual(ids(west), of('justBeforeEnd', 'middle', 'atStart'));
    });

    test('sub-millisecond bounds are honoured: a session at 10:00:00.000 is before 10:00:00.0005', async () => {
      const body = await listOk(pageId, { startDate: '2026-06-01T10:00:00.0005Z', endDate: '2026-06-01T12:00:00.0005Z' });
      assert.deepEqual(ids(body), of('atEnd', 'justBeforeEnd', 'middle'));
    });

    test('bounds that fall outside years 0000-9999 once normalised: every session is in range, or 400 (never 500)', async () => {
      const queries: Record<string, string>[] = [{ startDate: '0000-01-01T00:30:00+01:00' }, { endDate: '9999-12-31T23:30:00-01:00' }];
      const failures: string[] = [];
      for (const query of queries) {
        const res = await list(pageId, query);
        if (res.status !== 400 && (res.status !== 200 || res.body.totalCount !== 6)) {
          failures.push(`${JSON.stringify(query)} -> ${res.status} totalCount=${res.body?.totalCount}`);
          continue;
        }
        if (res.status === 400) {
          expectProblem(res, 400, 'validation_failed', [`/${Object.keys(query)[0]}`]);
          continue;
        }
        assertJson(res, 200);
      }
      assert.deepEqual(failures, []);
    });

    test('startDate equal to endDate is an empty list, even with a session at that instant', async () => {
      const body = await listOk(pageId, { startDate: '2026-06-01T10:00:00Z', endDate: '2026-06-01T10:00:00Z' });
      assert.deepEqual(body, { items: [], hasMore: false, nextCursor: null, totalCount: 0 });
      const offset = await listOk(pageId, { startDate: '2026-06-01T12:00:00+02:00', endDate: '2026-06-01T10:00:00Z' });
      assert.equal(offset.totalCount, 0);
    });

    test('startDate after endDate is 400', async () => {
      expectProblem(
        await list(pageId, { startDate: '2026-06-01T12:00:00.001Z', endDate: '2026-06-01T12:00:00Z' }),
        400,
        'validation_failed',
      );
      expectProblem(await list(pageId, { startDate: '2027-01-01T00:00:00Z', endDate: '2026-01-01T00:00:00Z' }), 400, 'validation_failed');
      // Judged on the instants: 11:00Z is after 12:00+02:00 (10:00Z).
      expectProblem(
        await list(pageId, { startDate: '2026-06-01T11:00:00Z', endDate: '2026-06-01T12:00:00+02:00' }),
        400,
        'validation_failed',
      );
      // And the other way round: 12:00+02:00 (10:00Z) is before 11:00Z.
      const ok = await listOk(pageId, { startDate: '2026-06-01T12:00:00+02:00', endDate: '2026-06-01T11:00:00Z' });
      assert.deepEqual(ids(ok), of('atStart'));
    });

    test('malformed dates are 400 at their parameter', async () => {
      const bad = ['2026-06-01T10:00:00', 'yesterday', '2026-13-01T00:00:00Z', '2026-02-30T00:00:00Z', '2026-06-01', '', '1772352000000'];
      for (const value of bad) {
        expectProblem(await list(pageId, { startDate: value }), 400, 'validation_failed', ['/startDate']);
        expectProblem(await list(pageId, { endDate: value }), 400, 'validation_failed', ['/endDate']);
      }
      // An unencoded "+" arrives as a space: not a date-time.
      expectProblem(
        await t.req('GET', `/v0/pages/${pageId}/audience_sessions?startDate=2026-06-01T12:00:00+02:00`),
        400,
        'validation_failed',
        ['/startDate'],
      );
    });
  });

  describe('audienceId filter', () => {
    test('only sessions of that audience; totalCount counts them', async () => {
      const pageId = await newPage('Two audiences');
      const a1 = await newAudience(pageId);
      const a2 = await newAudience(pageId);
      const x1 = await at(pageId, a1, '2026-07-01T00:00:00Z');
      const y1 = await at(pageId, a2, '2026-07-02T00:00:00Z');
      const x2 = await at(pageId, a1, '2026-07-03T00:00:00Z');
      const body = await listOk(pageId, { audienceId: a1 });
      assert.deepEqual(
        body.items.map((s: Json) => s.audienceSessionId),
        [x2.audienceSessionId, x1.audienceSessionId],
      );
      assert.equal(body.totalCount, 2);
      for (const s of body.items) assert.equal(s.audienceId, a1);
      const other = await listOk(pageId, { audienceId: a2 });
      assert.deepEqual(
        other.items.map((s: Json) => s.audienceSessionId),
        [y1.audienceSessionId],
      );
      // Combined with dates.
      const both = await listOk(pageId, { audienceId: a1, startDate: '2026-07-01T00:00:00Z', endDate: '2026-07-03T00:00:00Z' });
      assert.deepEqual(
        both.items.map((s: Json) => s.audienceSessionId),
        [x1.audienceSessionId],
      );
      assert.equal(both.totalCount, 1);
    });

    test('an audience with no sessions is an empty list, not 404', async () => {
      const { pageId, audienceId } = await setup();
      const quiet = await newAudience(pageId);
      await record(pageId, audienceId);
      assert.deepEqual(await listOk(pageId, { audienceId: quiet }), { items: [], hasMore: false, nextCursor: null, totalCount: 0 });
    });

    test('audienceId of another page, another tenant, unknown or malformed is 404', async () => {
      const { pageId, audienceId } = await setup();
      await record(pageId, audienceId);
      const other = await setup('Other');
      await record(other.pageId, other.audienceId);
      expectProblem(await list(pageId, { audienceId: other.audienceId }), 404, 'not_found');
      expectProblem(await list(pageId, { audienceId: UNKNOWN_AUDIENCE }), 404, 'not_found');
      expectProblem(await list(pageId, { audienceId: 'nope' }), 404, 'not_found');
      const { key } = await t.newTenant('Sessions foreign filter');
      const foreign = await setup('Foreign', key);
      expectProblem(await list(pageId, { audienceId: foreign.audienceId }), 404, 'not_found');
    });
  });

  describe('pagination', () => {
    test('walk with limit 2 to the end, with equal sessionStartedAt: no duplicate, no skip, exact order', async () => {
      const { pageId, audienceId } = await setup('Walk');
      const sessions: Json[] = [];
      sessions.push(await at(pageId, audienceId, '2026-08-01T00:00:00Z'));
      for (let i = 0; i < 4; i++) sessions.push(await at(pageId, audienceId, '2026-08-02T00:00:00Z'));
      sessions.push(await at(pageId, audienceId, '2026-08-03T00:00:00Z'));
      sessions.push(await at(pageId, audienceId, '2026-08-02T00:00:00Z'));
      const { ids, pages } = await walk(pageId, {}, 2);
      assert.equal(pages, 4);
      assert.equal(new Set(ids).size, 7);
      assert.deepEqual(ids, expectedOrder(sessions));
      // One page holding everything gives the same order.
      assert.deepEqual(
        (await listOk(pageId, { limit: 100 })).items.map((s: Json) => s.audienceSessionId),
        ids,
      );
    });

    test('a walk whose length is a multiple of the limit ends without an empty page', async () => {
      const { pageId, audienceId } = await setup('Even');
      const sessions: Json[] = [];
      for (let i = 0; i < 4; i++) sessions.push(await at(pageId, audienceId, `2026-08-0${1 + (i % 2)}T00:00:00Z`));
      const { ids, pages } = await walk(pageId, {}, 2);
      assert.equal(pages, 2);
      assert.deepEqual(ids, expectedOrder(sessions));
    });

    test('walk with limit 2 under filters (audienceId and dates)', async () => {
      const pageId = await newPage('Filtered walk');
      const a1 = await newAudience(pageId);
      const a2 = await newAudience(pageId);
      const mine: Json[] = [];
      const starts = [
        '2026-09-01T00:00:00Z',
        '2026-09-02T00:00:00Z',
        '2026-09-02T00:00:00Z',
        '2026-09-02T00:00:00Z',
        '2026-09-03T00:00:00Z',
        '2026-09-04T00:00:00Z',
      ];
      for (const [i, start] of starts.entries()) {
        const s = await at(pageId, a1, start);
        if (start >= '2026-09-02' && start < '2026-09-04') mine.push(s);
        await at(pageId, a2, start); // interleaved noise of the other audience
        if (i === 2) await at(pageId, a2, '2026-09-02T00:00:00Z');
      }
      assert.equal(mine.length, 4);
      const query = { audienceId: a1, startDate: '2026-09-02T00:00:00Z', endDate: '2026-09-04T00:00:00Z' };
      const { ids, pages } = await walk(pageId, query, 2);
      assert.equal(pages, 2);
      assert.deepEqual(ids, expectedOrder(mine));
      const one = await walk(pageId, { audienceId: a1 }, 1);
      assert.equal(one.pages, 6);
      assert.equal(new Set(one.ids).size, 6);
    });

    test('sessions recorded between pages cause no duplicate and no skip', async () => {
      const { pageId, audienceId } = await setup('Live');
      const initial: Json[] = [];
      for (let i = 1; i <= 5; i++) initial.push(await at(pageId, audienceId, `2026-10-0${i}T00:00:00Z`));
      const first = await listOk(pageId, { limit: 2 });
      const seen = first.items.map((s: Json) => s.audienceSessionId);
      // Newer than everything already seen (belongs before the cursor) and one at the cursor's instant.
      await at(pageId, audienceId, '2026-10-09T00:00:00Z');
      const tie = await at(pageId, audienceId, '2026-10-04T00:00:00Z');
      let cursor = first.nextCursor;
      while (cursor !== null) {
        const body = await listOk(pageId, { limit: 2, cursor });
        seen.push(...body.items.map((s: Json) => s.audienceSessionId));
        cursor = body.nextCursor;
        assert.ok(seen.length < 50);
      }
      assert.equal(new Set(seen).size, seen.length, 'no duplicate');
      for (const s of initial) assert.ok(seen.includes(s.audienceSessionId), 'no skip');
      // The tie at 10-04 has a newer id than the cursor row at 10-04, so it sorts before it: not seen, not a duplicate.
      assert.ok(!seen.includes(tie.audienceSessionId));
      assert.deepEqual(seen, expectedOrder(initial));
    });

    test('the limit may change between pages of one walk', async () => {
      const { pageId, audienceId } = await setup('Limits');
      const sessions: Json[] = [];
      for (let i = 1; i <= 5; i++) sessions.push(await at(pageId, audienceId, `2026-10-0${i}T00:00:00Z`));
      const first = await listOk(pageId, { limit: 1 });
      const rest = await listOk(pageId, { limit: 10, cursor: first.nextCursor });
      assert.deepEqual(
        [...first.items, ...rest.items].map((s: Json) => s.audienceSessionId),
        expectedOrder(sessions),
      );
      assert.equal(rest.hasMore, false);
      assert.equal(rest.nextCursor, null);
    });

    test('a cursor used with different filters, or on another page, is 400 at /cursor', async () => {
      const pageId = await newPage('Cursor filters');
      const a1 = await newAudience(pageId);
      const a2 = await newAudience(pageId);
      for (let i = 1; i <= 3; i++) {
        await at(pageId, a1, `2026-11-0${i}T00:00:00Z`);
        await at(pageId, a2, `2026-11-0${i}T00:00:00Z`);
      }
      const plain = await listOk(pageId, { limit: 1 });
      assert.ok(plain.nextCursor);
      const filtered = await listOk(pageId, { limit: 1, audienceId: a1 });
      assert.ok(filtered.nextCursor);
      const dated = await listOk(pageId, { limit: 1, startDate: '2026-11-01T00:00:00Z' });
      assert.ok(dated.nextCursor);

      expectProblem(await list(pageId, { limit: 1, cursor: plain.nextCursor, audienceId: a1 }), 400, 'validation_failed', ['/cursor']);
      expectProblem(await list(pageId, { limit: 1, cursor: filtered.nextCursor }), 400, 'validation_failed', ['/cursor']);
      expectProblem(await list(pageId, { limit: 1, cursor: filtered.nextCursor, audienceId: a2 }), 400, 'validation_failed', ['/cursor']);
      expectProblem(await list(pageId, { limit: 1, cursor: dated.nextCursor }), 400, 'validation_failed', ['/cursor']);
      expectProblem(
        await list(pageId, { limit: 1, cursor: dated.nextCursor, startDate: '2026-11-02T00:00:00Z' }),
        400,
        'validation_failed',
        ['/cursor'],
      );
      expectProblem(await list(pageId, { limit: 1, cursor: plain.nextCursor, endDate: '2027-01-01T00:00:00Z' }), 400, 'validation_failed', [
        '/cursor',
      ]);
      // The same filters work (the cursor itself is fine).
      assert.equal((await listOk(pageId, { limit: 1, cursor: filtered.nextCursor, audienceId: a1 })).items[0].audienceId, a1);
      assert.equal((await listOk(pageId, { limit: 1, cursor: dated.nextCursor, startDate: '2026-11-01T00:00:00Z' })).items.length, 1);

      // The cursor of another page's list.
      const other = await setup('Cursor other');
      await at(other.pageId, other.audienceId, '2026-11-01T00:00:00Z');
      await at(other.pageId, other.audienceId, '2026-11-02T00:00:00Z');
      const foreign = await listOk(other.pageId, { limit: 1 });
      assert.ok(foreign.nextCursor);
      expectProblem(await list(pageId, { limit: 1, cursor: foreign.nextCursor }), 400, 'validation_failed', ['/cursor']);
    });

    test('a garbage cursor or one from another list is 400 at /cursor', async () => {
      const { pageId, audienceId } = await setup('Garbage');
      await record(pageId, audienceId);
      const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
      for (const cursor of [
        'x',
        '!!!',
        b64([]),
        b64({}),
        b64(['sessions', 'x', '2026-01-01T00:00:00.000Z', 'session_01h0000000000000000000000a']),
        '',
      ]) {
        expectProblem(await list(pageId, { cursor }), 400, 'validation_failed', ['/cursor']);
      }
      await t.req('POST', '/v0/persons', { name: 'Cursor One' });
      await t.req('POST', '/v0/persons', { name: 'Cursor Two' });
      const persons = await t.req('GET', '/v0/persons?limit=1');
      assert.equal(persons.status, 200, persons.text);
      assert.ok(persons.body.nextCursor);
      expectProblem(await list(pageId, { cursor: persons.body.nextCursor }), 400, 'validation_failed', ['/cursor']);
    });

    test('limit: default 20, 1 and 100 accepted; outside 1-100 or not an integer is 400 at /limit', async () => {
      const { pageId, audienceId } = await setup('Limit bounds');
      for (let i = 0; i < 21; i++) await at(pageId, audienceId, new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString());
      const def = await listOk(pageId);
      assert.equal(def.items.length, 20);
      assert.equal(def.hasMore, true);
      assert.equal(def.totalCount, 21);
      const one = await listOk(pageId, { limit: 1 });
      assert.equal(one.items.length, 1);
      assert.equal(one.items[0].sessionStartedAt, '2026-01-01T00:20:00.000Z');
      const hundred = await listOk(pageId, { limit: 100 });
      assert.equal(hundred.items.length, 21);
      assert.equal(hundred.hasMore, false);
      assert.equal(hundred.nextCursor, null);
      for (const limit of ['0', '101', '-1', '1.5', 'abc', '', '1e1', '0x10']) {
        expectProblem(await list(pageId, { limit }), 400, 'validation_failed', ['/limit']);
      }
    });
  });

  test('an unknown query parameter is 400 at its path', async () => {
    const { pageId } = await setup();
    expectProblem(await list(pageId, { offset: 10 }), 400, 'validation_failed', ['/offset']);
    expectProblem(await list(pageId, { personId: 'person_01h0000000000000000000000a' }), 400, 'validation_failed', ['/personId']);
    expectProblem(await list(pageId, { start_date: '2026-01-01T00:00:00Z' }), 400, 'validation_failed', ['/start_date']);
  });

  test('unknown, malformed or deleted page is 404', async () => {
    expectProblem(await list(UNKNOWN_PAGE), 404, 'not_found');
    expectProblem(await list('nope'), 404, 'not_found');
    const { pageId, audienceId } = await setup('To delete');
    await record(pageId, audienceId);
    assert.equal((await t.req('DELETE', `/v0/pages/${pageId}`)).status, 204);
    expectProblem(await list(pageId), 404, 'not_found');
    expectProblem(await list(pageId, { audienceId }), 404, 'not_found');
  });
});
