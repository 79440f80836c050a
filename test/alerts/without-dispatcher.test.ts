import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { USER_AGENT } from '../browser.js';
import { ok, startApp, type TestApp } from '../helpers.js';
import { audienceOf, fallbackHost, link, publishedPage, unique, visit } from '../site/serve-helpers.js';
import { until } from '../until.js';
import { slack } from './slack.js';

// Issue 47 §3: alerts read the outbox from a cursor of their own, so an instance that delivers no
// webhooks (WEBHOOK_DISPATCHER=false) still sends them; the webhooks' consumer has not moved.

let t: TestApp;
let hooks: Awaited<ReturnType<typeof slack>>;
before(async () => {
  t = await startApp({ WEBHOOK_DISPATCHER: 'false', WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' });
  hooks = await slack();
});
after(async () => {
  await t.close();
  await hooks.close();
});

test('with WEBHOOK_DISPATCHER=false, a visit through a person’s link still sends its Slack alert', async () => {
  const domain = `${unique('acme')}.example`;
  const person = ok(await t.req('POST', '/v0/persons', { name: 'Jane Doe', domain }), 201);
  const account = ok(await t.req('POST', '/v0/accounts', { name: 'Acme', domain }), 201);
  const page = await publishedPage(t);
  const audience = await audienceOf(t, page.pageId, { personId: person.personId });
  const path = unique('for');
  await link(t, path, { targetType: 'audience', audienceId: audience.audienceId });
  ok(
    await t.req('POST', '/v0/alerts', {
      name: 'Acme on the site',
      channel: { type: 'slack', webhookUrl: hooks.url('acme') },
      when: { event: 'visit.started', accountIds: [account.accountId] },
    }),
    201,
  );
  const host = await fallbackHost(t);
  const res = await visit(t, host, path, { remoteAddress: '198.51.100.7', headers: { 'user-agent': USER_AGENT } });
  assert.equal(res.statusCode, 200);
  const token = JSON.parse(/<script type="application\/json" id="pam-view">([^<]*)<\/script>/.exec(res.body)?.[1] ?? '{}').token as string;
  const collected = await t.app.inject({
    method: 'POST',
    url: '/_pam/collect',
    remoteAddress: '198.51.100.7',
    headers: { host, 'content-type': 'text/plain;charset=UTF-8', 'user-agent': USER_AGENT },
    payload: JSON.stringify({ token, visibleMs: 1000, scroll: 10, clicks: 1, questions: 0, conversions: 0 }),
  });
  assert.equal(collected.statusCode, 204);
  const message = await until('the Slack message', () => hooks.received.find((r) => r.path.endsWith('/acme')), 15_000);
  assert.match(message.body.text, /Jane Doe \(Acme\) is on /);
  // The webhooks' consumer never ran: its cursor is where a new database starts it.
  const webhooks = await t.app.db
    .selectFrom('outbox_consumers')
    .select(['position', 'event_id'])
    .where('name', '=', 'webhooks')
    .executeTakeFirst();
  assert.deepEqual(webhooks, { position: 0, event_id: '' });
});
