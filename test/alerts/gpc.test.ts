import assert from 'node:assert/strict';
import { until } from '../until.js';
import { after, before, test } from 'node:test';
import { USER_AGENT } from '../browser.js';
import { type Json, ok, startApp, type TestApp } from '../helpers.js';
import { events, fakeCrm, type FakeCrm, postLead, type Seen, syncNow } from '../integrations/helpers.js';
import { audienceOf, fallbackHost, link, publishedPage, unique, visit } from '../site/serve-helpers.js';
import { slack } from './slack.js';
import { fakeProvider, PROVIDER_TOKEN } from '../enrichment/fake-provider.js';

// Issue 40, Sec-GPC: a visit or a lead sent with `Sec-GPC: 1` is recorded here (the events, the
// analytics) and never leaves: no Slack alert, nothing to the CRM. Slack and HubSpot are played by
// test servers; the same visit and lead without the header do reach Slack.

const TOKEN = 'pat-na1-00000000-gpc-hubspot-token';

let t: TestApp;
let host: string;
let hooks: Awaited<ReturnType<typeof slack>>;
let crm: FakeCrm;
let provider: Awaited<ReturnType<typeof fakeProvider>>;

/** HubSpot as documented, for what a sync asks: the contact properties, which emails it has (none), the upsert, no deals. */
function hubspot(seen: Seen) {
  assert.equal(seen.headers.authorization, `Bearer ${TOKEN}`);
  const key = `${seen.method} ${seen.path}`;
  if (key === 'GET /crm/v3/properties/contacts') return { body: { results: [{ name: 'email' }, { name: 'pam_last_page' }] } };
  if (key === 'POST /crm/v3/objects/contacts/batch/read') {
    const ids = (seen.body.inputs as Json[]).map((i) => i.id);
    return {
      status: 207,
      body: {
        status: 'COMPLETE',
        results: [],
        numErrors: 1,
        errors: [{ status: 'error', category: 'OBJECT_NOT_FOUND', context: { ids } }],
      },
    };
  }
  if (key === 'POST /crm/v3/objects/contacts/batch/upsert') return { body: { status: 'COMPLETE', results: [] } };
  if (key === 'POST /crm/v3/objects/deals/search') return { body: { total: 0, results: [] } };
  return undefined;
}

before(async () => {
  crm = await fakeCrm();
  crm.handle = hubspot;
  hooks = await slack();
  // The enrichment provider too (issue 45): a third party that must hear nothing of a Sec-GPC lead.
  provider = await fakeProvider(() => ({ status: 200, body: { company: null } }));
  t = await startApp(
    {
      ENRICHMENT_URL: provider.url,
      ENRICHMENT_TOKEN: PROVIDER_TOKEN,
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      COLLECT_RATE_PER_MINUTE: '1000',
      HUBSPOT_API_URL: crm.url,
      CRM_SYNC_SECONDS: '3600',
    },
    { crmSync: { pollMs: 50 } },
  );
  host = await fallbackHost(t);
});
after(async () => {
  await t.close();
  await hooks.close();
  await crm.close();
  await provider.close();
});

let n = 0;
/** A visit through a person's own link, served and reported with `headers` on both requests. */
async function visitThrough(path: string, headers: Record<string, string> = {}): Promise<void> {
  const address = `203.0.113.${++n}`;
  const res = await visit(t, host, path, { remoteAddress: address, headers: { 'user-agent': USER_AGENT, ...headers } });
  assert.equal(res.statusCode, 200, res.body);
  const token = JSON.parse(/<script type="application\/json" id="pam-view">([^<]*)<\/script>/.exec(res.body)?.[1] ?? '{}').token as string;
  for (const clicks of [1, 2]) {
    const collected = await t.app.inject({
      method: 'POST',
      url: '/_pam/collect',
      remoteAddress: address,
      headers: { host, 'content-type': 'text/plain;charset=UTF-8', 'user-agent': USER_AGENT, ...headers },
      payload: JSON.stringify({ token, visibleMs: 1000 * clicks, scroll: 10, clicks, questions: 0, conversions: 0 }),
    });
    assert.equal(collected.statusCode, 204, collected.body);
  }
}

async function personalPage(name: string, company: string) {
  const domain = `${unique('gpc').slice(1)}.example`;
  const person = ok(await t.req('POST', '/v0/persons', { name, email: `${name.split(' ')[0]?.toLowerCase()}@${domain}`, domain }), 201);
  const account = ok(await t.req('POST', '/v0/accounts', { name: company, domain }), 201);
  const page = await publishedPage(t);
  const audience = await audienceOf(t, page.pageId, { personId: person.personId });
  const path = unique('for');
  await link(t, path, { targetType: 'audience', audienceId: audience.audienceId });
  return { person, account, page, audience, path, domain };
}

const alertOn = async (hook: string, when: Json) =>
  ok(await t.req('POST', '/v0/alerts', { name: hook, channel: { type: 'slack', webhookUrl: hooks.url(hook) }, when }), 201);
const messagesOf = async (alertId: string) => ok(await t.req('GET', `/v0/alerts/${alertId}/messages`)).items as Json[];
const to = (hook: string) => hooks.received.filter((r) => r.path.endsWith(`/${hook}`));

test('a visit with Sec-GPC: 1 wakes no alert and is not counted in one; the same visit without it does; both are in the analytics', async () => {
  const jane = await personalPage('Jane Private', 'Quiet Corp');
  const bob = await personalPage('Bob Plain', 'Loud Ltd');
  const alert = await alertOn('visits', { event: 'visit.started', accountIds: [jane.account.accountId, bob.account.accountId] });
  const day = Date.parse(`${new Date().toISOString().slice(0, 10)}T00:00:00.000Z`);

  await visitThrough(jane.path, { 'sec-gpc': '1' });
  // Any other value is not the signal (the header is `1` or absent): Bob's visit alerts.
  await visitThrough(bob.path, { 'sec-gpc': '0' });
  await until("Bob Plain's visit alert", () => to('visits').find((r) => r.body.text.includes('Bob Plain')), 10_000);
  await new Promise((r) => setTimeout(r, 1000));
  assert.equal(to('visits').length, 1, JSON.stringify(to('visits')));
  assert.ok(!JSON.stringify(hooks.received).includes('Jane'), 'nothing of the Sec-GPC visit reached Slack');

  // Recorded here all the same: its event for the tenant's own webhooks and API.
  const started = (await events(t, 'visit.started')).map((e) => e.payload.data);
  assert.ok(started.some((d) => d.personId === jane.person.personId));

  // The same visit without the header alerts, with no "more" carried: the Sec-GPC one was not counted.
  await visitThrough(jane.path);
  const janes = await until("Jane Private's visit alert", () => to('visits').find((r) => r.body.text.includes('Jane Private')), 10_000);
  assert.doesNotMatch(janes.body.text, /more visit/);
  const messages = await messagesOf(alert.alertId);
  assert.deepEqual(
    messages.map((m) => m.more),
    [0, 0],
  );

  const query = `startDate=${new Date(day).toISOString()}&endDate=${new Date(day + 86_400_000).toISOString()}`;
  const analytics = ok(await t.req('GET', `/v0/pages/${jane.page.pageId}/analytics?${query}`));
  assert.equal(analytics.totals.visits, 2, 'the Sec-GPC visit is counted like any');
  const sessions = ok(await t.req('GET', `/v0/pages/${jane.page.pageId}/audience_sessions?limit=100`)).items as Json[];
  assert.equal(sessions.length, 2);
  assert.ok(
    sessions.every((s) => !('gpc' in s)),
    'the flag is not shown',
  );
});

test('a lead with Sec-GPC: 1 wakes no form.submitted alert and reaches no CRM or enrichment provider; the same lead without it does', async () => {
  const domain = `${unique('leads').slice(1)}.example`;
  ok(await t.req('POST', '/v0/accounts', { name: 'Lead Co', domain }), 201);
  const alert = await alertOn('leads', { event: 'form.submitted' });
  const integration = ok(await t.req('POST', '/v0/integrations', { provider: 'hubspot', accessToken: TOKEN }), 201);
  await postLead(t, { name: 'Private Lead', email: `private@${domain}` }, true);
  await postLead(t, { name: 'Plain Lead', email: `plain@${domain}` });
  await until("Plain Lead's lead alert", () => to('leads').find((r) => r.body.text.includes('Plain Lead')), 10_000);
  await new Promise((r) => setTimeout(r, 1000));
  assert.equal(to('leads').length, 1);
  assert.ok(!JSON.stringify(hooks.received).includes('Private Lead'));
  assert.equal((await messagesOf(alert.alertId)).length, 1);

  const synced = await syncNow(t, integration.integrationId);
  assert.equal(synced.lastError, null, JSON.stringify(synced));
  const upserts = crm.seen.filter((s) => s.path === '/crm/v3/objects/contacts/batch/upsert');
  const emails = upserts.flatMap((s) => (s.body.inputs as Json[]).map((i) => i.id));
  assert.ok(emails.includes(`plain@${domain}`), JSON.stringify(emails));
  assert.ok(!crm.seen.some((s) => s.text.includes('private@') || s.text.includes('Private')), 'the Sec-GPC lead never left');
  // Nothing about any visit is sent to a CRM (leads only), the Sec-GPC ones least of all.
  assert.ok(!crm.seen.some((s) => s.text.includes('Jane') || s.text.includes('session_')));
  // Nor the enrichment provider (issue 45): the plain lead was asked about, the Sec-GPC one not,
  // and it says why.
  assert.ok(provider.asked.some((a) => a.email === `plain@${domain}`));
  assert.ok(!provider.asked.some((a) => a.email === `private@${domain}`), JSON.stringify(provider.asked));
  const submitted = (await events(t, 'form.submitted')).map((e) => e.payload.data).find((d) => d.email === `private@${domain}`);
  const failed = (await events(t, 'form.enrichment_failed')).map((e) => e.payload.data);
  assert.deepEqual(
    failed.filter((d) => d.formSubmissionId === submitted.formSubmissionId).map((d) => d.reason),
    ['not_shared'],
  );
  // The lead itself is recorded here.
  const leads = ok(await t.req('GET', '/v0/leads?limit=100')).items as Json[];
  assert.ok(leads.some((l) => JSON.stringify(l).includes(`private@${domain}`)));
});
