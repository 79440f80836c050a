import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fileUrlSecret } from '../../src/assets/files.js';
import { viewTokens, type ViewTokens } from '../../src/site/token.js';
import { ok, startApp, type Json, type TestApp } from '../helpers.js';
import { startServer, type ServerProcess } from '../server-process.js';
import { audienceOf, fallbackHost, link, publishedPage, unique, visit } from '../site/serve-helpers.js';
import { newAudience, newPage, postSession } from './helpers.js';

// Issue 26: the pages overview keeps its answers under the tenant's `sessions` change counter
// (src/db/changes.ts), which every transaction that changes what it adds up moves. Each write
// path shows in the overview on the next request, after the answer before it was kept.

let t: TestApp;
let tokens: ViewTokens;
let host: string;
before(async () => {
  t = await startApp();
  tokens = viewTokens(await fileUrlSecret(t.app.db, t.app.config.fileUrlSecret));
  host = await fallbackHost(t);
});
after(async () => {
  await t.close();
});

/** The overview's default range (the last 30 days up to the next midnight) holds sessions started now. */
async function totalsOf(pageId: string, app = t): Promise<Json | undefined> {
  const body = ok(await app.req('GET', '/v0/analytics/pages?limit=100'));
  return (body.items as Json[]).find((p) => p.pageId === pageId);
}

/** Reads the overview twice, so that what it answers now is kept. */
async function keptTotals(pageId: string): Promise<Json | undefined> {
  const first = await totalsOf(pageId);
  assert.deepEqual(await totalsOf(pageId), first);
  return first;
}

let nextAddress = 1;
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

async function collect(token: string, fields: Json): Promise<void> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/_pam/collect',
    remoteAddress: `198.51.100.${nextAddress++}`,
    headers: { host, 'content-type': 'text/plain;charset=UTF-8', 'user-agent': BROWSER },
    payload: JSON.stringify({ token, visibleMs: 0, scroll: 0, clicks: 0, questions: 0, conversions: 0, ...fields }),
  });
  assert.equal(res.statusCode, 204, res.body);
}

describe('a change shows in the kept overview on the next request', () => {
  test('the collector: a visit first, then a later report of it', async () => {
    const page = await publishedPage(t);
    const audience = await audienceOf(t, page.pageId);
    const served = await link(t, unique('fresh'), { targetType: 'audience', audienceId: audience.audienceId });
    assert.equal(await keptTotals(page.pageId), undefined);
    // Issued a few seconds ago, so a report may claim some clicks and visible time.
    const { token } = tokens.sign(
      { tenantId: t.tenantId, pageId: page.pageId, audienceId: audience.audienceId, linkId: served.pageLinkId },
      Date.now() - 20_000,
    );
    await collect(token, {});
    const first = await totalsOf(page.pageId);
    assert.equal(first?.visits, 1);
    assert.equal(first?.clicks, 0);
    await keptTotals(page.pageId);
    await collect(token, { clicks: 3, visibleMs: 15_000 });
    const later = await totalsOf(page.pageId);
    assert.equal(later?.visits, 1);
    assert.equal(later?.clicks, 3);
  });

  test('a lead form', async () => {
    const person = ok(await t.req('POST', '/v0/persons', { name: 'Jane Roe' }), 201);
    const page = await publishedPage(t, {
      actions: [{ purpose: 'lead', buttonTitle: 'Send', actionType: 'form', url: '' }],
    });
    const audience = await audienceOf(t, page.pageId, { personId: person.personId });
    const path = unique('lead');
    await link(t, path, { targetType: 'audience', audienceId: audience.audienceId });
    const html = (await visit(t, host, path)).body as string;
    const hidden = (name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html)?.[1] ?? '';
    assert.equal(await keptTotals(page.pageId), undefined);
    const res = await visit(t, host, '/_pam/forms', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        token: hidden('token'),
        action: hidden('action'),
        path: hidden('path'),
        name: 'Jane Roe',
        email: 'jane@example.com',
      }).toString(),
      remoteAddress: '203.0.113.7',
    });
    assert.equal(res.statusCode, 303, res.body);
    const totals = await totalsOf(page.pageId);
    assert.equal(totals?.visits, 1);
    assert.equal(totals?.formSubmits, 1);
  });

  test('POST audience_sessions, then the page deleted', async () => {
    const pageId = await newPage(t, 'Fresh API');
    const audienceId = await newAudience(t, pageId);
    assert.equal(await keptTotals(pageId), undefined);
    await postSession(t, pageId, { audienceId, start: new Date(Date.now() - 60_000).toISOString(), conversion: true });
    const totals = await totalsOf(pageId);
    assert.equal(totals?.visits, 1);
    assert.equal(totals?.conversions, 1);
    await keptTotals(pageId);
    assert.equal((await t.req('DELETE', `/v0/pages/${pageId}`)).status, 204);
    assert.equal(await totalsOf(pageId), undefined);
  });

  test('and the cache is real: a session written behind the write paths is not seen while the counter stands still', async () => {
    const pageId = await newPage(t, 'Behind');
    const audienceId = await newAudience(t, pageId);
    await postSession(t, pageId, { audienceId, start: new Date(Date.now() - 60_000).toISOString() });
    assert.equal((await keptTotals(pageId))?.visits, 1);
    // The rollup row raised by hand, without the counter: the kept answer stands.
    await t.app.db
      .updateTable('analytics_days')
      .set((eb) => ({ visits: eb('visits', '+', 5) }))
      .where('page_id', '=', pageId)
      .execute();
    await t.app.db
      .updateTable('analytics_hours_utm')
      .set((eb) => ({ visits: eb('visits', '+', 5) }))
      .where('page_id', '=', pageId)
      .execute();
    assert.equal((await totalsOf(pageId))?.visits, 1);
    // Any session of the tenant moves the counter: then it is added up again.
    const moverPage = await newPage(t, 'Mover');
    await postSession(t, moverPage, { audienceId: await newAudience(t, moverPage), start: new Date().toISOString() });
    assert.ok(((await totalsOf(pageId))?.visits ?? 0) > 1);
  });
});

describe('another instance on the same database', () => {
  let other: ServerProcess;
  before(async () => {
    const database = t.app.config.database;
    other = await startServer({ DATABASE_URL: database.kind === 'sqlite' ? database.path : database.url });
  });
  after(async () => {
    await other?.kill();
  });

  test('a session it records shows here on the next request', { timeout: 30_000 }, async () => {
    const pageId = await newPage(t, 'Elsewhere');
    const audienceId = await newAudience(t, pageId);
    assert.equal(await keptTotals(pageId), undefined);
    const res = await fetch(`${other.url}/v0/pages/${pageId}/audience_sessions`, {
      method: 'POST',
      headers: { 'x-api-key': t.key, 'content-type': 'application/json' },
      body: JSON.stringify({
        audienceId,
        analyticsSessionId: 'elsewhere-1',
        pageUrl: 'https://example.com/elsewhere',
        sessionStartedAt: new Date(Date.now() - 60_000).toISOString(),
        sessionEndedAt: new Date().toISOString(),
        timeSpentSeconds: 30,
        maxScrollDepthPercentage: 50,
        totalClicksCount: 1,
        questionsAskedCount: 0,
        isBounce: false,
        hasFormSubmit: false,
        hasConversion: false,
      }),
    });
    assert.equal(res.status, 201, await res.text());
    assert.equal((await totalsOf(pageId))?.visits, 1);
  });
});
