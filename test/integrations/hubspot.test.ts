import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ok, startApp, type Json, type TestApp } from '../helpers.js';
import { FakeHubSpot } from './fake-hubspot.js';
import { type Answer, events, fakeCrm, type FakeCrm, postLead, type Seen, syncNow, until } from './helpers.js';

// HubSpot played by a node:http server that checks each request against the documented shapes.

const TOKEN = 'pat-na1-0b1c2d3e-secret-hubspot-token';
const METRICS = 'metrics-token-0123456789abcdef';
const DEAL_PROPERTIES = ['dealname', 'amount', 'dealstage', 'createdate', 'closedate', 'hs_lastmodifieddate', 'deal_currency_code'];

let t: TestApp;
let crm: FakeCrm;
const waits: number[] = [];
before(async () => {
  crm = await fakeCrm();
  t = await startApp(
    { HUBSPOT_API_URL: crm.url, CRM_SYNC_SECONDS: '3600', METRICS_TOKEN: METRICS },
    {
      crmSync: {
        pollMs: 50,
        // The syncs here are asked for by hand and their requests counted: a lead does not start one (lead-push.test.ts).
        consumeLeads: false,
        sleep: async (ms) => {
          waits.push(ms);
        },
      },
    },
  );
});
after(async () => {
  await t.close();
  await crm.close();
});

/** Every request: the bearer token, JSON in, and a documented path. */
function checkAuth(seen: Seen): void {
  assert.equal(seen.headers.authorization, `Bearer ${TOKEN}`, `${seen.method} ${seen.path}`);
  if (seen.method === 'POST') assert.equal(seen.headers['content-type'], 'application/json');
}

let upsertAnswers: Answer[] = [];
let propertiesAnswer: Answer = { body: { results: [{ name: 'email' }, { name: 'firstname' }, { name: 'pam_last_page' }] } };
const hub = new FakeHubSpot();

function hubspot(seen: Seen): Answer | undefined {
  checkAuth(seen);
  const key = `${seen.method} ${seen.path}`;
  if (key === 'GET /crm/v3/properties/contacts') return propertiesAnswer;
  if (key === 'POST /crm/v3/objects/contacts/batch/upsert' && upsertAnswers.length > 0) return upsertAnswers.shift();
  if (key === 'POST /crm/v3/objects/deals/search') assert.deepEqual(seen.body.properties, DEAL_PROPERTIES);
  if (key === 'POST /crm/v4/associations/deals/companies/batch/read') {
    const inputs = seen.body.inputs as { id: string }[];
    const results = inputs
      .filter((i) => i.id !== '103')
      .map((i) => ({
        from: { id: i.id },
        to: [{ toObjectId: Number(`9${i.id}`), associationTypes: [{ category: 'HUBSPOT_DEFINED', typeId: 5, label: 'Primary' }] }],
      }));
    return { body: { status: 'COMPLETE', results } };
  }
  if (key === 'POST /crm/v3/objects/companies/batch/read') {
    assert.deepEqual(seen.body.properties, ['domain']);
    const results = (seen.body.inputs as { id: string }[]).map((i) => ({ id: i.id, properties: { domain: 'www.Acme-Hub.example' } }));
    return { body: { status: 'COMPLETE', results } };
  }
  return hub.handle(seen);
}

describe('HubSpot', () => {
  let integrationId: string;

  test('a sync: new leads become contacts (after a 429 waited for as asked), a Sec-GPC lead stays, deals come in', async () => {
    crm.handle = hubspot;
    const account = ok(await t.req('POST', '/v0/accounts', { name: 'Acme Hub', domain: 'acme-hub.example' }), 201);
    await postLead(t, { name: 'Ada Lovelace', email: 'ada@acme-hub.example', phone: '+14155550123' });
    await postLead(t, { name: 'Private Person', email: 'private@acme-hub.example' }, true);
    upsertAnswers = [
      { status: 429, headers: { 'retry-after': '2' }, body: { status: 'error', message: 'You have reached your secondly limit.' } },
    ];
    const at = (iso: string) => Date.parse(iso);
    hub.deals.push(
      {
        id: '101',
        modified: at('2026-11-01T10:00:00.000Z'),
        properties: {
          dealname: 'Big one',
          amount: '1200.5',
          dealstage: 'closedwon',
          createdate: '2026-10-01T00:00:00Z',
          closedate: '2026-11-01T00:00:00Z',
          deal_currency_code: 'EUR',
        },
      },
      {
        id: '102',
        modified: at('2026-11-02T10:00:00.000Z'),
        properties: {
          dealname: 'Lost one',
          amount: null,
          dealstage: 'closedlost',
          createdate: '2026-10-02T00:00:00Z',
          closedate: '2026-11-02T00:00:00Z',
          deal_currency_code: null,
        },
      },
      {
        id: '103',
        modified: at('2026-11-03T10:00:00.000Z'),
        properties: { dealname: 'Open one', amount: '10', dealstage: 'appointmentscheduled', createdate: '2026-10-03T00:00:00Z' },
      },
    );
    const created = ok(await t.req('POST', '/v0/integrations', { provider: 'hubspot', accessToken: TOKEN }), 201);
    integrationId = created.integrationId;
    assert.equal(JSON.stringify(created).includes(TOKEN), false, 'the token is never returned');
    const done = await until(t, integrationId, (i) => i.lastSyncAt !== null || i.lastError !== null);
    assert.equal(done.lastError, null, JSON.stringify(done));
    assert.deepEqual(done.counts, { leadsPushed: 1, dealsSynced: 3 });

    const upserts = crm.seen.filter((s) => s.path === '/crm/v3/objects/contacts/batch/upsert');
    assert.equal(upserts.length, 2, 'the 429, then the retry');
    assert.ok(waits.includes(2000), `Retry-After: 2 waited 2 s (${waits})`);
    const input = upserts[1]?.body.inputs[0] as Json;
    assert.deepEqual(Object.keys(input.properties).sort(), ['company', 'email', 'firstname', 'lastname', 'pam_last_page', 'phone']);
    assert.equal(input.properties.firstname, 'Ada');
    assert.equal(input.properties.lastname, 'Lovelace');
    assert.equal(input.properties.company, 'Acme Hub');
    assert.equal(
      crm.seen.some((s) => s.text.includes('private@')),
      false,
      'the Sec-GPC lead never left',
    );
    assert.equal(crm.seen.filter((s) => s.path === '/crm/v3/properties/contacts').length, 1, 'the properties once per sync');

    const reads = crm.seen.filter((s) => s.path === '/crm/v3/objects/contacts/batch/read');
    assert.deepEqual(
      reads.flatMap((s) => s.body.inputs.map((i: Json) => i.id)),
      ['ada@acme-hub.example'],
      'the emails asked for first',
    );
    const searches = crm.seen.filter((s) => s.path === '/crm/v3/objects/deals/search');
    assert.equal(searches.length, 1, 'fewer deals than a page: one search');
    assert.equal(searches[0]?.body.filterGroups, undefined, 'the first sync reads every deal');

    const deals = (await events(t, 'deal.created')).map((e) => e.payload.data);
    const byId = new Map(deals.map((d) => [d.externalId, d]));
    assert.equal(byId.get('101')?.stage, 'won');
    assert.equal(byId.get('101')?.amount, 1200.5);
    assert.equal(byId.get('101')?.currency, 'EUR');
    assert.equal(byId.get('101')?.accountId, account.accountId);
    assert.equal(byId.get('101')?.closedAt, '2026-11-01T00:00:00.000Z');
    assert.equal(byId.get('102')?.stage, 'lost');
    assert.equal(byId.get('102')?.amount, 0);
    assert.equal(byId.get('103')?.stage, 'open');
    assert.equal(byId.get('103')?.accountId, null, 'no company: no account');
    assert.equal(byId.get('103')?.closedAt, null);
  });

  test('the token is sealed in the database, and the next sync resumes from the cursor and pushes nothing twice', async () => {
    const row = await t.app.db.selectFrom('integrations').selectAll().where('id', '=', integrationId).executeTakeFirstOrThrow();
    assert.equal(row.secrets.includes(TOKEN), false);
    assert.equal(row.secrets.includes(Buffer.from(TOKEN).toString('base64')), false);
    assert.match(row.secrets, /^v1\./);
    const before = crm.seen.length;
    await postLead(t, { name: 'Grace', email: 'grace@acme-hub.example' });
    const done = await syncNow(t, integrationId);
    assert.equal(done.lastError, null);
    const seen = crm.seen.slice(before);
    const upserts = seen.filter((s) => s.path === '/crm/v3/objects/contacts/batch/upsert');
    assert.deepEqual(
      upserts.flatMap((s) => s.body.inputs.map((i: Json) => i.id)),
      ['grace@acme-hub.example'],
    );
    // Resumed after the last deal read: the rest of its instant by id, then what came after it.
    const ms = String(Date.parse('2026-11-03T10:00:00.000Z'));
    const searches = seen.filter((s) => s.path === '/crm/v3/objects/deals/search');
    assert.deepEqual(
      searches.map((s) => [s.body.filterGroups, s.body.sorts]),
      [
        [
          [
            {
              filters: [
                { propertyName: 'hs_lastmodifieddate', operator: 'EQ', value: ms },
                { propertyName: 'hs_object_id', operator: 'GT', value: '103' },
              ],
            },
          ],
          [{ propertyName: 'hs_object_id', direction: 'ASCENDING' }],
        ],
        [
          [{ filters: [{ propertyName: 'hs_lastmodifieddate', operator: 'GT', value: ms }] }],
          [{ propertyName: 'hs_lastmodifieddate', direction: 'ASCENDING' }],
        ],
      ],
    );
    assert.equal(done.counts.dealsSynced, 3, 'nothing read again');
    assert.equal(done.counts.leadsPushed, 2);
  });

  test('a 5xx is retried with backoff, and one that persists lands in lastError without pausing', async () => {
    const before = crm.seen.length;
    propertiesAnswer = { status: 503, body: { message: 'down' } };
    await postLead(t, { name: 'Linus', email: 'linus@acme-hub.example' });
    const done = await syncNow(t, integrationId);
    assert.equal(done.status, 'active');
    assert.match(done.lastError, /HubSpot answered HTTP 503/);
    assert.equal(crm.seen.slice(before).filter((s) => s.path === '/crm/v3/properties/contacts').length, 4, 'four attempts in all');
    const metrics = await t.req('GET', '/v0/integrations');
    assert.equal(metrics.status, 200);
  });

  test('a 401 pauses the integration with lastError and emits integration.failed', async () => {
    propertiesAnswer = {
      status: 401,
      body: { status: 'error', message: 'Authentication credentials not found.', category: 'INVALID_AUTHENTICATION' },
    };
    const done = await syncNow(t, integrationId);
    assert.equal(done.status, 'paused');
    assert.match(done.lastError, /401: Authentication credentials not found/);
    assert.equal(done.nextSyncAt, null);
    const scraped = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS}` } });
    for (const outcome of ['succeeded', 'failed', 'refused']) {
      assert.match(
        scraped.body,
        new RegExp(`^pam_integration_syncs_total\\{provider="hubspot",outcome="${outcome}"\\} [1-9]`, 'm'),
        outcome,
      );
    }
    const failed = (await events(t, 'integration.failed')).find((e) => e.payload.data.integrationId === integrationId);
    assert.ok(failed);
    assert.equal(failed.payload.data.status, 'paused');
    assert.equal(JSON.stringify(failed).includes(TOKEN), false);
    const refused = await t.req('POST', `/v0/integrations/${integrationId}/sync`);
    assert.equal(refused.status, 409);
    // A new token and a resume: the sync runs again and works.
    propertiesAnswer = { body: { results: [] } };
    ok(await t.req('PATCH', `/v0/integrations/${integrationId}`, { accessToken: `${TOKEN}-2`, status: 'active' }));
    crm.handle = (seen) =>
      hubspot({ ...seen, headers: { ...seen.headers, authorization: seen.headers.authorization?.replace(/-2$/, '') } });
    const resumed = await until(t, integrationId, (i) => i.lastError === null && i.status === 'active');
    assert.equal(resumed.counts.leadsPushed, 3);
    assert.equal(crm.seen.at(-1)?.headers.authorization, `Bearer ${TOKEN}-2`);
  });
});
