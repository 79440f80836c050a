import assert from 'node:assert/strict';
import { until } from '../until.js';
import { after, before, describe, test } from 'node:test';
import { USER_AGENT } from '../browser.js';
import { expectProblem, type Json, ok, startApp, type TestApp } from '../helpers.js';
import { audienceOf, fallbackHost, link, publishedPage, unique, visit } from '../site/serve-helpers.js';
import { slack } from './slack.js';

// Issue 40, sales alerts: the resource's bounds, and Slack played by a server that checks each
// request as Slack's incoming webhooks document it (POST, JSON with `text` and `blocks`, answer "ok").

let t: TestApp;
let host: string;
let hooks: Awaited<ReturnType<typeof slack>>;

before(async () => {
  t = await startApp({
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_RETRY_SCHEDULE: '0.2,0.2',
    COLLECT_RATE_PER_MINUTE: '1000',
  });
  host = await fallbackHost(t);
  hooks = await slack();
});
after(async () => {
  await t.close();
  await hooks.close();
});

let n = 0;
/** A visit through a person's own link, reported once: visit.started names the person and account. */
async function visitThrough(path: string): Promise<void> {
  const address = `198.51.100.${++n}`;
  const res = await visit(t, host, path, { remoteAddress: address, headers: { 'user-agent': USER_AGENT } });
  assert.equal(res.statusCode, 200, res.body);
  const token = JSON.parse(/<script type="application\/json" id="pam-view">([^<]*)<\/script>/.exec(res.body)?.[1] ?? '{}').token as string;
  const collected = await t.app.inject({
    method: 'POST',
    url: '/_pam/collect',
    remoteAddress: address,
    headers: { host, 'content-type': 'text/plain;charset=UTF-8', 'user-agent': USER_AGENT },
    payload: JSON.stringify({ token, visibleMs: 1000, scroll: 10, clicks: 1, questions: 0, conversions: 0 }),
  });
  assert.equal(collected.statusCode, 204, collected.body);
}

async function personalPage(name: string, company: string, domain: string) {
  const person = ok(await t.req('POST', '/v0/persons', { name, domain }), 201);
  const account = ok(await t.req('POST', '/v0/accounts', { name: company, domain }), 201);
  const page = await publishedPage(t);
  const audience = await audienceOf(t, page.pageId, { personId: person.personId });
  const path = unique('for');
  await link(t, path, { targetType: 'audience', audienceId: audience.audienceId });
  return { person, account, page, audience, path };
}

describe('POST /v0/alerts', () => {
  const valid = () => ({
    name: 'Target accounts',
    channel: { type: 'slack', webhookUrl: hooks.url('valid') },
    when: { event: 'visit.started' },
  });

  test('creates an alert (201) that GET, PATCH and DELETE then work on; another tenant sees none of it', async () => {
    const created = ok(await t.req('POST', '/v0/alerts', valid()), 201);
    assert.match(created.alertId, /^alert_[a-z0-9]{26}$/);
    assert.deepEqual(created.when, { event: 'visit.started', accountIds: null, segmentIds: null, pageIds: null });
    assert.equal(created.active, true);
    assert.deepEqual(ok(await t.req('GET', `/v0/alerts/${created.alertId}`)), created);
    const paused = ok(await t.req('PATCH', `/v0/alerts/${created.alertId}`, { ...created, active: false }));
    assert.equal(paused.active, false);
    const listed = ok(await t.req('GET', '/v0/alerts?limit=100')).items as Json[];
    assert.ok(listed.some((a) => a.alertId === created.alertId));
    const other = await t.newTenant('Other alerts');
    assert.equal((await t.req('GET', `/v0/alerts/${created.alertId}`, undefined, { key: other.key })).status, 404);
    assert.equal((await t.req('DELETE', `/v0/alerts/${created.alertId}`, undefined, { key: other.key })).status, 404);
    assert.equal((ok(await t.req('GET', '/v0/alerts', undefined, { key: other.key })).items as Json[]).length, 0);
    assert.equal((await t.req('DELETE', `/v0/alerts/${created.alertId}`)).status, 204);
    assert.equal((await t.req('GET', `/v0/alerts/${created.alertId}`)).status, 404);
  });

  test("bounds: name 1-200, ids 1-100 and the tenant's own, the event one of two, the URL as webhooks take it", async () => {
    ok(await t.req('POST', '/v0/alerts', { ...valid(), name: 'x'.repeat(200) }), 201);
    expectProblem(await t.req('POST', '/v0/alerts', { ...valid(), name: 'x'.repeat(201) }), 400, 'validation_failed', ['/name']);
    expectProblem(await t.req('POST', '/v0/alerts', { ...valid(), name: '' }), 400, 'validation_failed', ['/name']);
    expectProblem(await t.req('POST', '/v0/alerts', { ...valid(), when: { event: 'page.created' } }), 400, 'validation_failed', [
      '/when/event',
    ]);
    const page = await publishedPage(t);
    ok(await t.req('POST', '/v0/alerts', { ...valid(), when: { event: 'form.submitted', pageIds: [page.pageId] } }), 201);
    expectProblem(
      await t.req('POST', '/v0/alerts', {
        ...valid(),
        when: { event: 'visit.started', pageIds: [page.pageId, 'page_00000000000000000000000000'] },
      }),
      400,
      'validation_failed',
      ['/when/pageIds/1'],
    );
    expectProblem(
      await t.req('POST', '/v0/alerts', { ...valid(), when: { event: 'visit.started', accountIds: [] } }),
      400,
      'validation_failed',
      ['/when/accountIds'],
    );
    const many = Array.from({ length: 101 }, (_, i) => `account_${String(i).padStart(26, '0')}`);
    expectProblem(
      await t.req('POST', '/v0/alerts', { ...valid(), when: { event: 'visit.started', accountIds: many } }),
      400,
      'validation_failed',
      ['/when/accountIds'],
    );
    const other = await t.newTenant('Alien accounts');
    const alien = ok(await t.req('POST', '/v0/accounts', { name: 'Alien', domain: `${unique('alien')}.example` }, { key: other.key }), 201);
    expectProblem(
      await t.req('POST', '/v0/alerts', { ...valid(), when: { event: 'visit.started', accountIds: [alien.accountId] } }),
      400,
      'validation_failed',
      ['/when/accountIds/0'],
    );
    expectProblem(
      await t.req('POST', '/v0/alerts', { ...valid(), channel: { type: 'email', webhookUrl: hooks.url('x') } }),
      400,
      'validation_failed',
      ['/channel/type'],
    );
    expectProblem(
      await t.req('POST', '/v0/alerts', { ...valid(), channel: { type: 'slack', webhookUrl: 'ftp://hooks.slack.com/x' } }),
      400,
      'validation_failed',
      ['/channel/webhookUrl'],
    );
    expectProblem(await t.req('POST', '/v0/alerts', { ...valid(), surprise: 1 }), 400, 'validation_failed');
  });

  test('without WEBHOOK_ALLOW_HTTP / _PRIVATE the URL is https and public, and the message names the setting', async () => {
    const strict = await startApp();
    try {
      const body = (url: string) => ({ name: 'Strict', channel: { type: 'slack', webhookUrl: url }, when: { event: 'visit.started' } });
      const http1 = await strict.req('POST', '/v0/alerts', body('http://hooks.example.com/services/T1/B1/x'));
      expectProblem(await strict.req('POST', '/v0/alerts', body('http://hooks.example.com/services/T1/B1/x')), 400, 'validation_failed', [
        '/channel/webhookUrl',
      ]);
      assert.match(http1.text, /WEBHOOK_ALLOW_HTTP/);
      const private1 = await strict.req('POST', '/v0/alerts', body('https://10.0.0.1/services/T1/B1/x'));
      expectProblem(await strict.req('POST', '/v0/alerts', body('https://10.0.0.1/services/T1/B1/x')), 400, 'validation_failed', [
        '/channel/webhookUrl',
      ]);
      assert.match(private1.text, /WEBHOOK_ALLOW_PRIVATE/);
      ok(await strict.req('POST', '/v0/alerts', body('https://hooks.slack.com/services/T1/B1/x')), 201);
    } finally {
      await strict.close();
    }
  });
});

describe('alert messages', () => {
  test("a visit through Jane's link sends one Slack message naming her, her account, the page and the source; later visits that hour send none", async () => {
    const jane = await personalPage('Jane <b>Doe</b>', 'Acme & Co', `${unique('acme')}.example`);
    const alert = ok(
      await t.req('POST', '/v0/alerts', {
        name: 'Acme on the site',
        channel: { type: 'slack', webhookUrl: hooks.url('jane') },
        when: { event: 'visit.started', accountIds: [jane.account.accountId] },
      }),
      201,
    );
    await visitThrough(jane.path);
    const first = await until('the first message about /jane', () => hooks.received.find((r) => r.path.endsWith('/jane')), 10_000);
    assert.match(first.body.text, /Jane &lt;b&gt;Doe&lt;\/b&gt; \(Acme &amp; Co\) is on /);
    const blocks = JSON.stringify(first.body.blocks);
    assert.match(blocks, /\*Account\*\\nAcme &amp; Co/);
    assert.match(blocks, /\*Source\*\\ndirect/);
    assert.ok(blocks.includes(`/console/#/pages/${jane.page.pageId}/audiences/${jane.audience.audienceId}|Open in the console>`), blocks);
    assert.doesNotMatch(blocks, /<b>/, 'a stored name is never markup in Slack');

    // Two more visits in the same hour: counted, not sent.
    await visitThrough(jane.path);
    await visitThrough(jane.path);
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(hooks.received.filter((r) => r.path.endsWith('/jane')).length, 1);
    const messages = ok(await t.req('GET', `/v0/alerts/${alert.alertId}/messages`)).items as Json[];
    assert.deepEqual(
      messages.map((m) => [m.status, m.more]),
      [['succeeded', 0]],
    );

    // The hour turns (the window is moved back an hour rather than the clock on): the next visit
    // sends a message that carries the two that had none.
    const hour = new Date(Date.now() - 3_600_000).toISOString().slice(0, 13);
    await t.app.db.updateTable('alert_windows').set({ hour }).where('alert_id', '=', alert.alertId).execute();
    await visitThrough(jane.path);
    const second = await until('the second message about /jane', () => hooks.received.filter((r) => r.path.endsWith('/jane'))[1], 10_000);
    assert.match(second.body.text, /is on .* \(and 2 more visits in the hour before\)$/);
    const now = ok(await t.req('GET', `/v0/alerts/${alert.alertId}/messages`)).items as Json[];
    assert.deepEqual(
      now.map((m) => m.more),
      [2, 0],
    );
  });

  test('an alert for another account, another page or a paused alert sends nothing', async () => {
    const bob = await personalPage('Bob Roe', 'Roe Ltd', `${unique('roe')}.example`);
    const elsewhere = await personalPage('Eve', 'Elsewhere', `${unique('else')}.example`);
    const otherPage = await publishedPage(t);
    const body = (hook: string, when: Json, active = true) => ({
      name: hook,
      channel: { type: 'slack', webhookUrl: hooks.url(hook) },
      when,
      active,
    });
    ok(await t.req('POST', '/v0/alerts', body('otheraccount', { event: 'visit.started', accountIds: [elsewhere.account.accountId] })), 201);
    ok(await t.req('POST', '/v0/alerts', body('otherpage', { event: 'visit.started', pageIds: [otherPage.pageId] })), 201);
    ok(await t.req('POST', '/v0/alerts', body('paused', { event: 'visit.started', accountIds: [bob.account.accountId] }, false)), 201);
    ok(await t.req('POST', '/v0/alerts', body('leadsonly', { event: 'form.submitted', accountIds: [bob.account.accountId] })), 201);
    ok(await t.req('POST', '/v0/alerts', body('bobspage', { event: 'visit.started', pageIds: [bob.page.pageId] })), 201);
    await visitThrough(bob.path);
    await until('the message about /bobspage', () => hooks.received.find((r) => r.path.endsWith('/bobspage')), 10_000);
    await new Promise((r) => setTimeout(r, 1000));
    for (const hook of ['otheraccount', 'otherpage', 'paused', 'leadsonly']) {
      assert.equal(hooks.received.filter((r) => r.path.endsWith(`/${hook}`)).length, 0, hook);
    }
  });

  test('Slack answering 429 and 500 is retried; POST …/test sends a test message (202)', async () => {
    const alert = ok(
      await t.req('POST', '/v0/alerts', {
        name: 'Retry me',
        channel: { type: 'slack', webhookUrl: hooks.url('retry') },
        when: { event: 'visit.started' },
      }),
      201,
    );
    hooks.status.next.push(429, 500);
    const test1 = ok(await t.req('POST', `/v0/alerts/${alert.alertId}/test`, {}), 202);
    assert.equal(test1.eventType, 'alert.test');
    const got = await until('the message to /retry', () => hooks.received.find((r) => r.path.endsWith('/retry')), 10_000);
    assert.match(got.body.text, /Test message from the alert "Retry me"/);
    const messages = await until(
      'the retried message',
      async () => {
        const items = ok(await t.req('GET', `/v0/alerts/${alert.alertId}/messages`)).items as Json[];
        return items[0]?.status === 'succeeded' ? items : undefined;
      },
      10_000,
    );
    assert.equal(messages[0]?.attempts, 3);
    assert.equal((await t.req('POST', '/v0/alerts/alert_00000000000000000000000000/test', {})).status, 404);
  });
});
