import assert from 'node:assert/strict';
import http from 'node:http';
import vm from 'node:vm';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { fileUrlSecret } from '../../src/assets/files.js';
import { loadConfig } from '../../src/config.js';
import { recordVisit } from '../../src/visits/repository.js';
import { MEASURING_SCRIPT, VITALS_SCRIPT } from '../../src/site/measure/script.js';
import { VIEW_TOKEN_MAX_AGE_MS, VIEW_TOKEN_PURPOSE, viewTokens, type ViewTokens } from '../../src/site/token.js';
import type { VisitClaims } from '../../src/visits/index.js';
import { startApp, type Json, type Res, type TestApp, ok, onPostgres, signAnything } from '../helpers.js';

// The measuring half of the visitor plane: /_pam/v.js and POST /_pam/collect, driven with view
// tokens signed by the app's own secret (what a served document carries).

const PROXY = '10.9.0.0/16';
let t: TestApp;
let tokens: ViewTokens;
let host: string;
let page: Json;
let audience: Json;
let link: Json;

before(async () => {
  t = await startApp({ TRUST_PROXY: `${PROXY}, 192.0.2.1` });
  tokens = viewTokens(await fileUrlSecret(t.app.db, t.app.config.fileUrlSecret));
  host = (ok(await t.req('GET', '/v0/tenant_domains')).items as Json[]).find((d) => d.isFallback).hostname;
  page = ok(await t.req('POST', '/v0/pages', { name: 'Spring', title: 'Spring offer', pageContext: 'ctx', pageType: 'inbound' }), 201);
  audience = ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, {}), 201);
  link = ok(
    await t.req('POST', '/v0/page_links', { path: '/spring', target: { targetType: 'audience', audienceId: audience.audienceId } }),
    201,
  );
});
after(async () => {
  await t.close();
});

/** Each test reports from its own address, so the rate limit of one never touches another. */
let nextAddress = 1;
const freshAddress = () => `198.51.100.${nextAddress++}`;

const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

interface Send {
  address?: string;
  headers?: Record<string, string>;
  contentType?: string;
}

async function send(body: unknown, opts: Send = {}): Promise<Res> {
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  const res = await t.app.inject({
    method: 'POST',
    url: '/_pam/collect',
    remoteAddress: opts.address ?? freshAddress(),
    headers: { host, 'content-type': opts.contentType ?? 'text/plain;charset=UTF-8', 'user-agent': BROWSER, ...opts.headers },
    payload,
  });
  return { status: res.statusCode, headers: res.headers, body: undefined, text: res.body };
}

function sign(at = Date.now(), extra: Partial<VisitClaims> = {}) {
  return tokens.sign({ tenantId: t.tenantId, pageId: page.pageId, audienceId: audience.audienceId, linkId: link.pageLinkId, ...extra }, at);
}

const report = (token: string, fields: Json = {}) => ({
  token,
  visibleMs: 0,
  scroll: 0,
  clicks: 0,
  questions: 0,
  conversions: 0,
  ...fields,
});

async function sessionOf(visitId: string, pageId = page.pageId): Promise<Json | undefined> {
  const items = ok(await t.req('GET', `/v0/pages/${pageId}/audience_sessions?limit=100`)).items as Json[];
  return items.find((s) => s.analyticsSessionId === visitId);
}

async function createdEventsOf(visitId: string): Promise<number> {
  const items = ok(await t.req('GET', '/v0/events?type=audience_session.created&limit=100')).items as Json[];
  return items.filter((e) => e.payload.data.analyticsSessionId === visitId).length;
}

describe('GET /_pam/v.js', () => {
  test('is the script, at most 3 KB gzipped, cached long with a strong ETag, and 304 on a match', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/_pam/v.js', headers: { host } });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/javascript/);
    // Issue 49: at most 3 KB gzipped with click maps and web vitals (web-vitals itself is /_pam/wv.js).
    const gzipped = gzipSync(res.body, { level: 9 }).length;
    assert.ok(gzipped <= 3072, `${gzipped} bytes gzipped`);
    assert.equal(res.body, MEASURING_SCRIPT);
    assert.match(String(res.headers['cache-control']), /public, max-age=\d{5,}/);
    const etag = String(res.headers.etag);
    assert.match(etag, /^"[\w-]+"$/);
    const again = await t.app.inject({ method: 'GET', url: '/_pam/v.js', headers: { host, 'if-none-match': etag } });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    const head = await t.app.inject({ method: 'HEAD', url: '/_pam/v.js', headers: { host } });
    assert.equal(head.statusCode, 200);
  });

  test('/_pam/wv.js is web-vitals, handing its functions to the measuring script, cached as v.js', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/_pam/wv.js', headers: { host } });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/javascript/);
    assert.equal(res.body, VITALS_SCRIPT);
    new vm.Script(VITALS_SCRIPT);
    assert.match(VITALS_SCRIPT, /onLCP/);
    assert.doesNotMatch(VITALS_SCRIPT, /sourceMappingURL|https?:\/\//);
    const again = await t.app.inject({ method: 'GET', url: '/_pam/wv.js', headers: { host, 'if-none-match': String(res.headers.etag) } });
    assert.equal(again.statusCode, 304);
  });

  test('is valid JavaScript that keeps nothing and calls no one else', () => {
    new vm.Script(MEASURING_SCRIPT);
    assert.doesNotMatch(MEASURING_SCRIPT, /cookie|localStorage|sessionStorage|indexedDB|https?:\/\//);
    assert.match(MEASURING_SCRIPT, /sendBeacon\('\/_pam\/collect'/);
    assert.match(MEASURING_SCRIPT, /getElementById\('pam-view'\)/);
  });

  test('does not exist on the API host', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/_pam/v.js', headers: { host: 'localhost' } });
    assert.equal(res.statusCode, 404);
  });
});

describe('POST /_pam/collect: one visit, one session', () => {
  test('the first report creates the session, later ones update it; one audience_session.created', async () => {
    const { token, claims } = sign(Date.now() - 5_000);
    const utm = { utmSource: 'news', utmMedium: 'email', utmCampaign: 'spring', utmTerm: '', utmContent: 'hero' };
    assert.equal((await send(report(token, utm))).status, 204);
    const first = await sessionOf(claims.visitId);
    assert.ok(first, 'the session exists after the first report');
    assert.equal(first.audienceId, audience.audienceId);
    assert.equal(first.pageId, page.pageId);
    assert.equal(first.pageTitle, 'Spring offer');
    // The public origin of a domain reached without TLS: http, and the port the service listens on (config.port when injected).
    assert.equal(first.pageUrl, `http://${host}:${t.app.config.port}/spring`);
    assert.equal(first.sessionStartedAt, first.sessionEndedAt);
    assert.equal(first.isBounce, true);
    assert.equal(first.hasConversion, false);
    assert.equal(first.hasFormSubmit, false);
    assert.deepEqual(
      [first.utmSource, first.utmMedium, first.utmCampaign, first.utmTerm, first.utmContent],
      ['news', 'email', 'spring', '', 'hero'],
    );

    await new Promise((r) => setTimeout(r, 20));
    assert.equal((await send(report(token, { ...utm, visibleMs: 500, scroll: 40, clicks: 2, questions: 1 }))).status, 204);
    assert.equal((await send(report(token, { ...utm, visibleMs: 800, scroll: 70.5, clicks: 3, conversions: 1 }))).status, 204);
    const later = await sessionOf(claims.visitId);
    assert.equal(later.audienceSessionId, first.audienceSessionId);
    assert.equal(later.sessionStartedAt, first.sessionStartedAt);
    assert.ok(later.sessionEndedAt > first.sessionEndedAt);
    assert.equal(later.timeSpentSeconds, 0.8);
    assert.equal(later.maxScrollDepthPercentage, 70.5);
    assert.equal(later.totalClicksCount, 3);
    assert.equal(later.questionsAskedCount, 1);
    assert.equal(later.hasConversion, true);
    assert.equal(later.isBounce, false);
    assert.equal(await createdEventsOf(claims.visitId), 1);
  });

  test('UTM fields are empty strings when absent, and a later report cannot change those set', async () => {
    const { token, claims } = sign();
    assert.equal((await send(report(token, { utmSource: 'ads' }))).status, 204);
    assert.equal((await send(report(token, { utmSource: 'forged', utmMedium: 'cpc' }))).status, 204);
    const s = await sessionOf(claims.visitId);
    assert.deepEqual([s.utmSource, s.utmMedium, s.utmCampaign, s.utmTerm, s.utmContent], ['ads', 'cpc', '', '', '']);
  });

  test('counts only rise: a report with lower numbers lowers nothing', async () => {
    const { token, claims } = sign(Date.now() - 60_000);
    assert.equal((await send(report(token, { visibleMs: 30_000, scroll: 80, clicks: 5, questions: 2, conversions: 1 }))).status, 204);
    assert.equal((await send(report(token, { visibleMs: 1000, scroll: 10, clicks: 1, questions: 0, conversions: 0 }))).status, 204);
    const s = await sessionOf(claims.visitId);
    assert.deepEqual(
      [s.timeSpentSeconds, s.maxScrollDepthPercentage, s.totalClicksCount, s.questionsAskedCount, s.hasConversion],
      [30, 80, 5, 2, true],
    );
  });

  test('the served path in the token, when given, is the pageUrl; a trusted proxy names the scheme', async () => {
    const { token, claims } = sign(Date.now(), { path: '/spring/jane' });
    const res = await send(report(token), {
      address: '10.9.1.1',
      headers: { 'x-forwarded-proto': 'https', 'x-forwarded-for': freshAddress() },
    });
    assert.equal(res.status, 204);
    assert.equal((await sessionOf(claims.visitId)).pageUrl, `https://${host}/spring/jane`);
    // An untrusted client saying https is not believed.
    const other = sign();
    assert.equal((await send(report(other.token), { headers: { 'x-forwarded-proto': 'https' } })).status, 204);
    assert.equal((await sessionOf(other.claims.visitId)).pageUrl, `http://${host}:${t.app.config.port}/spring`);
  });

  test('a visit of a page deleted since it was served is not recorded', async () => {
    const gone = ok(await t.req('POST', '/v0/pages', { name: 'Gone', title: 'Gone', pageContext: 'ctx', pageType: 'inbound' }), 201);
    const a = ok(await t.req('POST', `/v0/pages/${gone.pageId}/audiences`, {}), 201);
    const { token, claims } = tokens.sign({ tenantId: t.tenantId, pageId: gone.pageId, audienceId: a.audienceId, linkId: link.pageLinkId });
    assert.equal((await t.req('DELETE', `/v0/pages/${gone.pageId}`)).status, 204);
    assert.equal((await send(report(token))).status, 204);
    const rows = await t.app.db.selectFrom('audience_sessions').select('id').where('visit_id', '=', claims.visitId).execute();
    assert.equal(rows.length, 0);
  });

  test('a visit whose page is deleted after its first report: the later reports change nothing', async () => {
    const gone = ok(
      await t.req('POST', '/v0/pages', { name: 'Gone later', title: 'Gone later', pageContext: 'ctx', pageType: 'inbound' }),
      201,
    );
    const a = ok(await t.req('POST', `/v0/pages/${gone.pageId}/audiences`, {}), 201);
    const { token, claims } = tokens.sign(
      { tenantId: t.tenantId, pageId: gone.pageId, audienceId: a.audienceId, linkId: link.pageLinkId },
      Date.now() - 60_000,
    );
    assert.equal((await send(report(token, { visibleMs: 1000, clicks: 1 }))).status, 204);
    const stored = () => t.app.db.selectFrom('audience_sessions').selectAll().where('visit_id', '=', claims.visitId).execute();
    const [before] = await stored();
    assert.ok(before, 'the first report created the session');
    assert.equal((await t.req('DELETE', `/v0/pages/${gone.pageId}`)).status, 204);
    assert.equal((await send(report(token, { visibleMs: 30_000, scroll: 90, clicks: 5, conversions: 1 }))).status, 204);
    assert.deepEqual(await stored(), [before]);
  });

  test('reports of one visit arriving together make one session and one audience_session.created', async () => {
    const { token, claims } = sign(Date.now() - 60_000);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => send(report(token, { visibleMs: 1000 * (i + 1), clicks: i + 1 }))),
    );
    assert.deepEqual(
      answers.map((r) => r.status),
      Array(8).fill(204),
    );
    const rows = await t.app.db.selectFrom('audience_sessions').selectAll().where('visit_id', '=', claims.visitId).execute();
    assert.equal(rows.length, 1);
    assert.equal(Number(rows[0]?.total_clicks_count), 8);
    assert.equal(Number(rows[0]?.time_spent_seconds), 8);
    assert.equal(await createdEventsOf(claims.visitId), 1);
  });

  test('over a real socket, as a browser sends it', async () => {
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = new URL(address);
    const { token, claims } = sign();
    const body = JSON.stringify(report(token, { visibleMs: 10, clicks: 1 }));
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/_pam/collect',
          headers: { host: `${host}:${port}`, 'content-type': 'text/plain;charset=UTF-8', 'user-agent': BROWSER },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    assert.equal(status, 204);
    assert.equal((await sessionOf(claims.visitId)).totalClicksCount, 1);
  });
});

describe('POST /_pam/collect: bounds', () => {
  test('what a person can do in 10 s is taken as it is', async () => {
    const { token, claims } = sign(Date.now() - 10_000);
    assert.equal((await send(report(token, { visibleMs: 9_000, clicks: 200, questions: 10 }))).status, 204);
    const s = await sessionOf(claims.visitId);
    assert.deepEqual([s.timeSpentSeconds, s.totalClicksCount, s.questionsAskedCount], [9, 200, 10]);
  });

  test('more than that is cut to it: 20 clicks and 1 question a second, visible time to the wall time', async () => {
    const { token, claims } = sign(Date.now() - 10_000);
    assert.equal((await send(report(token, { visibleMs: 3_600_000, clicks: 201_000, questions: 11_000 }))).status, 204);
    const s = await sessionOf(claims.visitId);
    assert.ok(s.totalClicksCount >= 200 && s.totalClicksCount <= 210, String(s.totalClicksCount));
    assert.ok(s.questionsAskedCount === 10, String(s.questionsAskedCount));
    assert.ok(s.timeSpentSeconds >= 10 && s.timeSpentSeconds < 11, String(s.timeSpentSeconds));
  });

  test('a report claiming 10,000 clicks 1 s after the last one raises the count by about 20', async () => {
    const signedAt = Date.now() - 1000;
    const { token, claims } = sign(signedAt);
    const firstSent = Date.now();
    assert.equal((await send(report(token, { clicks: 10_000, visibleMs: 60_000 }))).status, 204);
    // A loaded machine may take a while to answer: the bound is 20 a second of the wall time it took.
    const wall = (Date.now() - signedAt) / 1000;
    const s = await sessionOf(claims.visitId);
    assert.ok(s.totalClicksCount >= 20 && s.totalClicksCount <= Math.floor(20 * wall), `${s.totalClicksCount} in ${wall} s`);
    assert.ok(s.timeSpentSeconds <= wall, `${s.timeSpentSeconds} in ${wall} s`);
    // Reported at once again: the grace of one second is all it gets, unless more time went by.
    assert.equal((await send(report(token, { clicks: 10_000 }))).status, 204);
    const since = Math.max(1, (Date.now() - firstSent) / 1000);
    const again = await sessionOf(claims.visitId);
    assert.ok(again.totalClicksCount <= s.totalClicksCount + Math.floor(20 * since), `${again.totalClicksCount} after ${since} s`);
  });

  test('isBounce: no click, no form and under 10 s of visible time', async () => {
    const cases: [Json, boolean][] = [
      [{ visibleMs: 9_999 }, true],
      [{ visibleMs: 10_000 }, false],
      [{ visibleMs: 0, clicks: 1 }, false],
    ];
    for (const [fields, bounce] of cases) {
      const { token, claims } = sign(Date.now() - 20_000);
      assert.equal((await send(report(token, fields))).status, 204);
      assert.equal((await sessionOf(claims.visitId)).isBounce, bounce, JSON.stringify(fields));
    }
  });

  test('a report keeps what a lead form of the visit set, and counts it as a conversion', async () => {
    const { token, claims } = sign(Date.now() - 5_000);
    await t.app.db.transaction().execute((trx) =>
      recordVisit(
        trx,
        {
          tenantId: t.tenantId,
          pageId: page.pageId,
          audienceId: audience.audienceId,
          visitId: claims.visitId,
          pageUrl: `http://${host}/spring`,
          pageTitle: 'Spring offer',
          startedAt: new Date().toISOString(),
        },
        undefined,
        {
          session_ended_at: new Date().toISOString(),
          time_spent_seconds: 0,
          max_scroll_depth_percentage: 0,
          total_clicks_count: 0,
          questions_asked_count: 0,
          is_bounce: 0,
          has_form_submit: 1,
          has_conversion: 1,
          form_submission_id: 'form_1',
          form_submission_identifier: 'lead',
          form_submission_email: 'jane@example.com',
          form_submission_phone: '+14155550100',
          utm_campaign: '',
          utm_content: '',
          utm_medium: '',
          utm_source: '',
          utm_term: '',
        },
      ),
    );
    assert.equal((await send(report(token, { visibleMs: 1000, utmSource: 'news' }))).status, 204);
    const s = await sessionOf(claims.visitId);
    assert.equal(s.hasFormSubmit, true);
    assert.equal(s.hasConversion, true);
    assert.equal(s.isBounce, false);
    assert.deepEqual(
      [s.formSubmissionId, s.formSubmissionIdentifier, s.formSubmissionEmail, s.formSubmissionPhone],
      ['form_1', 'lead', 'jane@example.com', '+14155550100'],
    );
    assert.equal(s.utmSource, 'news');
    assert.equal(s.timeSpentSeconds, 1);
  });
});

describe('POST /_pam/collect: what is refused, and writes nothing', () => {
  async function refused(body: unknown, status = 400, opts: Send = {}): Promise<Res> {
    const before = await t.app.db.selectFrom('audience_sessions').select('id').execute();
    const res = await send(body, opts);
    assert.equal(res.status, status, res.text);
    const afterRows = await t.app.db.selectFrom('audience_sessions').select('id').execute();
    assert.equal(afterRows.length, before.length, 'nothing written');
    return res;
  }

  test('a forged, altered, foreign or expired token', async () => {
    const { token } = sign();
    const [body, mac] = token.split('.') as [string, string];
    const altered = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), pageId: 'page_01h0000000000000000000000a' }),
    ).toString('base64url');
    await refused(report(`${altered}.${mac}`));
    await refused(report(`${body}.${mac.slice(0, -2)}AA`));
    await refused(report(`${body}.${mac}.x`));
    await refused(report('not-a-token'));
    const stranger = viewTokens('another secret of at least thirty-two characters').sign({
      tenantId: t.tenantId,
      pageId: page.pageId,
      audienceId: audience.audienceId,
      linkId: link.pageLinkId,
    });
    await refused(report(stranger.token));
    await refused(report(sign(Date.now() - VIEW_TOKEN_MAX_AGE_MS - 1000).token));
    // Just inside the 24 hours it is taken.
    assert.equal((await send(report(sign(Date.now() - VIEW_TOKEN_MAX_AGE_MS + 60_000).token))).status, 204);
  });

  test('a token taken before is refused once it is older than 24 h, and an altered one never borrows its claims', () => {
    const { token, claims } = sign();
    assert.deepEqual(tokens.verify(token, claims.issuedAt + 1000), claims);
    assert.deepEqual(tokens.verify(token, claims.issuedAt + VIEW_TOKEN_MAX_AGE_MS), claims);
    assert.equal(tokens.verify(token, claims.issuedAt + VIEW_TOKEN_MAX_AGE_MS + 1), undefined);
    assert.equal(tokens.verify(token, claims.issuedAt - 61_000), undefined);
    const [body, mac] = token.split('.') as [string, string];
    assert.equal(tokens.verify(`${body}.${mac.slice(0, -2)}AA`, claims.issuedAt + 1000), undefined);
    assert.equal(tokens.verify(`${body}x.${mac}`, claims.issuedAt + 1000), undefined);
  });

  test("a genuinely signed token whose claims are not a visit's is refused", () => {
    // Signed as viewTokens signs (its key derived from the secret), over JSON a signer would never
    // write: the signature alone does not make the claims a visit's.
    const secret = 'a secret of at least thirty-two characters, for claims';
    const signed = signAnything(secret, VIEW_TOKEN_PURPOSE);
    const own = viewTokens(secret);
    const at = 1_000_000;
    const good = { tenantId: 't', pageId: 'p', audienceId: 'a', linkId: 'l', visitId: 'v', issuedAt: at };
    assert.deepEqual(own.verify(signed(good), at), good);
    // A field beside the claims (a later version's) is let through.
    assert.deepEqual(own.verify(signed({ ...good, later: 1 }), at), { ...good, later: 1 });
    const { linkId: _, ...noLink } = good;
    for (const bad of [
      noLink,
      { ...good, issuedAt: String(at) },
      { ...good, issuedAt: at + 0.5 },
      { ...good, issuedAt: null },
      { ...good, pageId: 7 },
      { ...good, path: 7 },
      { ...good, unit: null },
      { ...good, versionId: ['v'] },
      [good],
      'claims',
      null,
    ])
      assert.equal(own.verify(signed(bad), at), undefined, JSON.stringify(bad));
  });

  test('a token is one base64url JSON whatever the length of its path, and each visit of a document is its own', () => {
    const own = viewTokens('a secret of at least thirty-two characters, for this');
    // Paths whose JSON ends on each of the three byte offsets, in ASCII and in multi-byte UTF-8.
    for (const path of ['/a', '/ab', '/abc', '/é', '/éé', '/日本', '/𝔘', '/"quoted"\\and</script>']) {
      const fields = { tenantId: 'tenant_1', pageId: 'page_1', audienceId: 'audience_1', linkId: 'link_1', path };
      const first = own.sign(fields, 1_000_000);
      const second = own.sign(fields, 1_000_500);
      for (const { token, claims } of [first, second]) {
        assert.deepEqual(own.verify(token, claims.issuedAt + 1), claims);
        const decoded = JSON.parse(Buffer.from(token.split('.')[0] as string, 'base64url').toString('utf8'));
        assert.deepEqual(decoded, { ...fields, visitId: claims.visitId, issuedAt: claims.issuedAt });
        assert.match(token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
      }
      assert.notEqual(first.claims.visitId, second.claims.visitId);
      assert.equal(second.claims.issuedAt, 1_000_500);
      // An arm's fields shared by its visitors, each visitor's unit beside them (site/serve/run.ts).
      const arm = { ...fields, experimentId: 'experiment_1', arm: 'b' };
      for (const unit of ['v:AbC-_9', 'person:person_1', 'a "quoted" \\ unit']) {
        const { token, claims } = own.sign(arm, 1_000_700, unit);
        assert.deepEqual(claims, { ...arm, unit, visitId: claims.visitId, issuedAt: 1_000_700 });
        assert.deepEqual(own.verify(token, 1_000_701), claims);
        const decoded = JSON.parse(Buffer.from(token.split('.')[0] as string, 'base64url').toString('utf8'));
        assert.deepEqual(decoded, claims);
      }
    }
  });

  test("another tenant's genuine token on this tenant's domain", async () => {
    const other = await t.newTenant('Other');
    const { token } = tokens.sign({
      tenantId: other.tenantId,
      pageId: page.pageId,
      audienceId: audience.audienceId,
      linkId: link.pageLinkId,
    });
    await refused(report(token));
  });

  test('a body over 2 KB is 400; exactly 2 KB is taken', async () => {
    const { token, claims } = sign();
    const json = JSON.stringify(report(token));
    const exact = `${json.slice(0, -1)}${' '.repeat(2048 - Buffer.byteLength(json))}}`;
    assert.equal(Buffer.byteLength(exact), 2048);
    await refused(`${exact.slice(0, -1)} }`);
    assert.equal((await send(exact)).status, 204);
    assert.ok(await sessionOf(claims.visitId));
    await refused('x'.repeat(100_000));
  });

  test('bad reports name the field and never echo a value', async () => {
    const { token } = sign();
    const res = await refused(report(token, { scroll: 101 }));
    assert.match(res.text, /\/scroll/);
    assert.match(String(res.headers['content-type']), /^text\/plain/);
    await refused(report(token, { scroll: -1 }));
    await refused(report(token, { clicks: -1 }));
    await refused(report(token, { clicks: 1.5 }));
    await refused(report(token, { clicks: '5' }));
    await refused(report(token, { utmSource: 'x'.repeat(256) }));
    await refused(report(token, { utmSource: 5 }));
    const extra = await refused(report(token, { '<script>': 1 }));
    assert.doesNotMatch(extra.text, /<script>/);
    const { token: _t, ...noToken } = report(token);
    await refused(noToken);
    await refused('not json');
    await refused('');
    await refused('[]');
    await refused('null');
    await refused(report(token), 415, { contentType: 'application/x-www-form-urlencoded' });
    // At the bounds: scroll 100 and a UTM value of 255 characters are taken.
    assert.equal((await send(report(token, { scroll: 100, utmSource: 'x'.repeat(255) }))).status, 204);
  });

  test('application/json is taken like text/plain', async () => {
    const { token, claims } = sign();
    assert.equal((await send(report(token), { contentType: 'application/json' })).status, 204);
    assert.ok(await sessionOf(claims.visitId));
  });
});

describe('POST /_pam/collect: abuse', () => {
  /**
   * Sends until the bucket refuses: the first sixty are taken (400 for an empty report, 429 never),
   * and the next is refused, give or take the one token a second the bucket earns back meanwhile,
   * which a slow machine spends on the way. Returns the refusal.
   */
  async function sixtyThenRefused(sendOne: (i: number) => Promise<Res>, what: string): Promise<Res> {
    const started = performance.now();
    for (let i = 0; i < 60; i++) assert.equal((await sendOne(i)).status, 400, `${what} ${i + 1}`);
    for (let i = 60; ; i++) {
      const res = await sendOne(i);
      if (res.status === 429) return res;
      assert.equal(res.status, 400, `${what} ${i + 1}`);
      const earned = Math.ceil((performance.now() - started) / 1000);
      assert.ok(i + 1 <= 60 + earned, `${what} ${i + 1} was taken after ${earned} s: the bucket holds sixty and earns one a second`);
    }
  }

  test('known bots get 204 and are not recorded', async () => {
    for (const ua of [
      'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
      'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)',
      'curl/8.5.0',
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/124.0.0.0 Safari/537.36',
    ]) {
      const { token, claims } = sign();
      assert.equal((await send(report(token), { headers: { 'user-agent': ua } })).status, 204, ua);
      assert.equal(await sessionOf(claims.visitId), undefined, ua);
    }
  });

  test('60 reports a minute per address, then 429 with Retry-After; another address is not affected', async () => {
    const address = freshAddress();
    const limited = await sixtyThenRefused(() => send('{}', { address }), 'report');
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    const { token, claims } = sign();
    assert.equal((await send(report(token), { address })).status, 429);
    assert.equal(await sessionOf(claims.visitId), undefined);
    assert.equal((await send('{}', { address: freshAddress() })).status, 400);
  });

  test('IPv6 clients are counted by their /64', async () => {
    await sixtyThenRefused(
      (i) => send('{}', { address: i < 60 ? `2001:db8:1:2::${i.toString(16)}` : `2001:db8:1:2:ffff::${i.toString(16)}` }),
      'in the /64',
    );
    assert.equal((await send('{}', { address: '2001:db8:1:3::1' })).status, 400);
  });

  test('X-Forwarded-For is believed from a trusted proxy only, its right-most untrusted entry', async () => {
    // The bucket refills one token a second: on a slow machine the sixty requests below take more
    // than a second, so the bucket's end is looked for within a few more, never sixty.
    const limitedWithin = async (few: number, sendOne: () => Promise<Res>) => {
      for (let i = 0; i < few; i++) if ((await sendOne()).status === 429) return true;
      return false;
    };
    const client = freshAddress();
    // Through the proxy (and a second trusted hop), with a different forged left part each time: one bucket.
    for (let i = 0; i < 60; i++) {
      const res = await send('{}', { address: '10.9.0.7', headers: { 'x-forwarded-for': `1.2.3.${i}, ${client}, 192.0.2.1` } });
      assert.equal(res.status, 400);
    }
    assert.ok(await limitedWithin(5, () => send('{}', { address: '10.9.200.1', headers: { 'x-forwarded-for': client } })));
    // Another client behind the same proxy has its own bucket.
    assert.equal((await send('{}', { address: '10.9.0.7', headers: { 'x-forwarded-for': freshAddress() } })).status, 400);
    // A client that is not a proxy cannot escape its bucket by saying it forwards someone else.
    const direct = freshAddress();
    for (let i = 0; i < 60; i++) {
      assert.equal((await send('{}', { address: direct, headers: { 'x-forwarded-for': `203.0.113.${i}` } })).status, 400);
    }
    assert.ok(await limitedWithin(5, () => send('{}', { address: direct, headers: { 'x-forwarded-for': '203.0.113.200' } })));
  });

  test('no IP address or user agent is stored anywhere', async () => {
    const ua = 'Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/125.0 Uniq7f3a9';
    const { token, claims } = sign();
    const res = await send(report(token, { clicks: 1 }), {
      address: '10.9.0.9',
      headers: { 'user-agent': ua, 'x-forwarded-for': '203.0.113.77' },
    });
    assert.equal(res.status, 204);
    assert.ok(await sessionOf(claims.visitId));
    const dump: string[] = [];
    for (const table of await t.app.db.introspection.getTables()) {
      const rows = await t.app.db
        .selectFrom(table.name as 'audience_sessions')
        .selectAll()
        .execute();
      dump.push(JSON.stringify(rows, (_k, v) => (typeof v === 'bigint' ? String(v) : Buffer.isBuffer(v) ? v.toString('latin1') : v)));
    }
    const all = dump.join('\n');
    assert.ok(all.includes(claims.visitId), 'the dump holds the visit');
    for (const needle of ['203.0.113.77', '10.9.0.9', 'Uniq7f3a9', 'Firefox/125']) assert.ok(!all.includes(needle), needle);
  });
});

describe('configuration', () => {
  test('COLLECT_RATE_PER_MINUTE sets the bucket; TRUST_PROXY and it refuse what they cannot mean', async () => {
    const three = await startApp({ COLLECT_RATE_PER_MINUTE: '3' });
    try {
      const domains = ok(await three.req('GET', '/v0/tenant_domains')).items as Json[];
      const on = domains.find((d) => d.isFallback).hostname;
      const post = () =>
        three.app.inject({
          method: 'POST',
          url: '/_pam/collect',
          headers: { host: on, 'content-type': 'text/plain', 'user-agent': BROWSER },
          payload: '{}',
        });
      for (let i = 0; i < 3; i++) assert.equal((await post()).statusCode, 400);
      const limited = await post();
      assert.equal(limited.statusCode, 429);
      // One report every 20 s comes back.
      assert.ok(Number(limited.headers['retry-after']) > 1 && Number(limited.headers['retry-after']) <= 20);
    } finally {
      await three.close();
    }
    assert.deepEqual(loadConfig({ TRUST_PROXY: ' 10.0.0.1, 10.1.0.0/16,::1, fd00::/8 ' }).trustProxy, [
      '10.0.0.1',
      '10.1.0.0/16',
      '::1',
      'fd00::/8',
    ]);
    assert.equal(loadConfig({}).collectRatePerMinute, 60);
    for (const env of [
      { TRUST_PROXY: 'proxy.local' },
      { TRUST_PROXY: '10.0.0.0/33' },
      { TRUST_PROXY: '10.0.0.0/8/1' },
      { TRUST_PROXY: '::1/129' },
      { COLLECT_RATE_PER_MINUTE: '0' },
      { COLLECT_RATE_PER_MINUTE: 'many' },
    ]) {
      const name = Object.keys(env)[0] as string;
      assert.throws(
        () => loadConfig(env),
        (err: Error) => err.name === 'ConfigError' && err.message.includes(name),
        JSON.stringify(env),
      );
    }
  });
});

describe('on PostgreSQL, a report is one statement (issue 31)', { skip: !onPostgres && 'PostgreSQL only' }, () => {
  test("first and later reports, with events and clicked purposes: one statement each, by the service's own counter", async () => {
    const METRICS = 'collect-metrics-token-0123456789';
    // No webhook dispatcher or alerts' loop: their rounds would read the reports' events meanwhile, statements of their own.
    const m = await startApp({ METRICS_TOKEN: METRICS, WEBHOOK_DISPATCHER: 'false', ALERT_SENDER: 'false' });
    const started = Date.now();
    try {
      const signer = viewTokens(await fileUrlSecret(m.app.db, m.app.config.fileUrlSecret));
      const on = (ok(await m.req('GET', '/v0/tenant_domains')).items as Json[]).find((d) => d.isFallback).hostname;
      const p = ok(await m.req('POST', '/v0/pages', { name: 'Counted', title: 'Counted', pageContext: 'ctx', pageType: 'inbound' }), 201);
      const a = ok(await m.req('POST', `/v0/pages/${p.pageId}/audiences`, {}), 201);
      const l = ok(
        await m.req('POST', '/v0/page_links', { path: '/counted', target: { targetType: 'audience', audienceId: a.audienceId } }),
        201,
      );
      /** Every statement the service has run so far: the sum of its query counter's series. */
      const statements = async () => {
        const res = await m.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS}` } });
        let total = 0;
        for (const line of res.body.split('\n')) {
          if (line.startsWith('pam_db_query_duration_seconds_count')) total += Number(line.slice(line.lastIndexOf(' ') + 1));
        }
        return total;
      };
      const post = (body: unknown) =>
        m.app.inject({
          method: 'POST',
          url: '/_pam/collect',
          remoteAddress: freshAddress(),
          headers: { host: on, 'content-type': 'text/plain', 'user-agent': BROWSER },
          payload: JSON.stringify(body),
        });
      // Warmed: the day's secret read once, and the door past the 5 s after this process made the
      // tenant's domain, during which it reads the domains counter on every look-up (site/hosts.ts).
      const warm = signer.sign({ tenantId: m.tenantId, pageId: p.pageId, audienceId: a.audienceId, linkId: l.pageLinkId });
      assert.equal((await post(report(warm.token))).statusCode, 204);
      await new Promise((r) => setTimeout(r, Math.max(0, started + 5_500 - Date.now())));
      // A scrape may read the database itself (the webhook backlog): its own cost, measured, is taken off.
      const scrape = -(await statements()) + (await statements());
      const before = await statements();
      let reports = 0;
      const visits: string[] = [];
      for (let v = 0; v < 5; v++) {
        const { token, claims } = signer.sign(
          { tenantId: m.tenantId, pageId: p.pageId, audienceId: a.audienceId, linkId: l.pageLinkId },
          Date.now() - 60_000,
        );
        visits.push(claims.visitId);
        const bodies = [
          report(token, { referrer: 'https://www.google.com/', visibleMs: 1000 }),
          report(token, { visibleMs: 5000, clicks: 1, events: [['signup', 1, 10]], actions: [['book', 1]] }),
          report(token, { visibleMs: 9000, clicks: 2, events: [['signup', 1, 10]], actions: [['book', 2]] }),
          report(token, { visibleMs: 12_000, clicks: 2, utmSource: 'late' }),
        ];
        for (const body of bodies) {
          assert.equal((await post(body)).statusCode, 204);
          reports++;
        }
      }
      const run = (await statements()) - before - scrape;
      // The sweep of ended visits may add a statement meanwhile.
      assert.ok(run >= reports && run <= reports + 1, `${run} statements for ${reports} reports`);
      const sessions = ok(await m.req('GET', `/v0/pages/${p.pageId}/audience_sessions?limit=100`)).items as Json[];
      for (const visitId of visits) {
        const s = sessions.find((x) => x.analyticsSessionId === visitId);
        assert.equal(s?.totalClicksCount, 2);
        assert.equal(s?.timeSpentSeconds, 12);
        assert.equal(s?.utmSource, 'late');
        assert.equal(s?.channel, 'search');
      }
    } finally {
      await m.close();
    }
  });
});
