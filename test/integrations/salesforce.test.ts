import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ok, startApp, type Json, type TestApp } from '../helpers.js';
import { type Answer, events, fakeCrm, type FakeCrm, postLead, type Seen, syncNow, until } from './helpers.js';

// Salesforce played by a node:http server (token, SOQL, sObjects) that checks every request.

const CLIENT_ID = '3MVG9-consumer-key-0123456789';
const CLIENT_SECRET = 'consumer-secret-ABCDEF0123456789';
const ACCESS = '00Dxx0000001gPL!AR8AQ-access-token';
const DATA = '/services/data/v60.0';

let t: TestApp;
let crm: FakeCrm;
before(async () => {
  crm = await fakeCrm();
  t = await startApp({ SALESFORCE_LOGIN_URL: crm.url, CRM_SYNC_SECONDS: '3600' }, { crmSync: { pollMs: 50, sleep: async () => {} } });
});
after(async () => {
  await t.close();
  await crm.close();
});

const existingLeads = new Map([['grace@sf.example', '00Q000000000001']]);
let tokenAnswer: Answer = {
  body: { access_token: ACCESS, instance_url: 'ignored', id: 'x', token_type: 'Bearer', issued_at: '1', signature: 's' },
};
let opportunityPages: Record<string, Answer> = {};

const opp = (id: string, modified: string, fields: Record<string, unknown>) => ({
  attributes: { type: 'Opportunity', url: `${DATA}/sobjects/Opportunity/${id}` },
  Id: id,
  LastModifiedDate: modified,
  ...fields,
});

function salesforce(seen: Seen): Answer | undefined {
  if (seen.method === 'POST' && seen.path === '/services/oauth2/token') {
    assert.equal(seen.headers['content-type'], 'application/x-www-form-urlencoded');
    const form = new URLSearchParams(seen.text);
    assert.deepEqual(Object.fromEntries(form), { grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET });
    return tokenAnswer;
  }
  assert.equal(seen.headers.authorization, `Bearer ${ACCESS}`, `${seen.method} ${seen.path}`);
  if (seen.method === 'GET' && seen.path === `${DATA}/sobjects/Opportunity/describe`) {
    return { body: { name: 'Opportunity', fields: [{ name: 'Id' }, { name: 'Amount' }, { name: 'CurrencyIsoCode' }] } };
  }
  if (seen.method === 'GET' && seen.path === `${DATA}/query`) {
    const q = seen.query.get('q') ?? '';
    const lead = /^SELECT Id FROM Lead WHERE Email = '([^']+)' LIMIT 1$/.exec(q);
    if (lead) {
      const id = existingLeads.get(lead[1] as string);
      return { body: { totalSize: id ? 1 : 0, done: true, records: id ? [{ attributes: { type: 'Lead' }, Id: id }] : [] } };
    }
    assert.match(
      q,
      /^SELECT Id, Name, Amount, StageName, IsWon, IsClosed, CreatedDate, CloseDate, LastModifiedDate, CurrencyIsoCode, Account\.Website FROM Opportunity( WHERE LastModifiedDate > \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)? ORDER BY LastModifiedDate ASC, Id ASC$/,
    );
    return opportunityPages.first ?? { body: { totalSize: 0, done: true, records: [] } };
  }
  if (seen.method === 'GET' && seen.path.startsWith(`${DATA}/query/`)) return opportunityPages[seen.path];
  if (seen.method === 'POST' && seen.path === `${DATA}/sobjects/Lead`) {
    assert.equal(seen.headers['content-type'], 'application/json');
    assert.ok(seen.body.LastName && seen.body.Company && seen.body.Email);
    return { status: 201, body: { id: '00Q000000000999', success: true, errors: [] } };
  }
  if (seen.method === 'PATCH' && seen.path === `${DATA}/sobjects/Lead/00Q000000000001`) {
    assert.equal(seen.body.Email, undefined, 'the email it was found by stays');
    return { status: 204 };
  }
  return undefined;
}

describe('Salesforce', () => {
  let integrationId: string;

  test('instanceUrl: Salesforce hosts or the login URL origin only; fields of the other provider are refused', async () => {
    const bad = await t.req('POST', '/v0/integrations', {
      provider: 'salesforce',
      clientId: 'a',
      clientSecret: 'b',
      instanceUrl: 'https://evil.example',
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errors[0].path, '/instanceUrl');
    const http = await t.req('POST', '/v0/integrations', {
      provider: 'salesforce',
      clientId: 'a',
      clientSecret: 'b',
      instanceUrl: 'http://acme.my.salesforce.com',
    });
    assert.equal(http.body.errors[0].path, '/instanceUrl');
    const missing = await t.req('POST', '/v0/integrations', {
      provider: 'salesforce',
      clientId: 'a',
      instanceUrl: 'https://acme.my.salesforce.com',
    });
    assert.deepEqual(
      missing.body.errors.map((e: Json) => e.path),
      ['/clientSecret'],
    );
    const mixed = await t.req('POST', '/v0/integrations', { provider: 'hubspot', accessToken: 'x', clientId: 'a' });
    assert.deepEqual(
      mixed.body.errors.map((e: Json) => e.path),
      ['/clientId'],
    );
  });

  test('a sync: token, leads found or created by email, opportunities followed through nextRecordsUrl', async () => {
    crm.handle = salesforce;
    const account = ok(await t.req('POST', '/v0/accounts', { name: 'Initech', domain: 'initech.example' }), 201);
    await postLead(t, { name: 'Grace Hopper', email: 'grace@sf.example', phone: '+14155550124' });
    await postLead(t, { name: 'Solo', email: 'solo@sf.example' });
    await postLead(t, { name: 'Hidden', email: 'hidden@sf.example' }, true);
    opportunityPages = {
      first: {
        body: {
          totalSize: 3,
          done: false,
          nextRecordsUrl: `${DATA}/query/01gD0000002HU6KIAW-2000`,
          records: [
            opp('006A', '2026-11-01T10:00:00.000+0000', {
              Name: 'Won',
              Amount: 5000,
              StageName: 'Closed Won',
              IsWon: true,
              IsClosed: true,
              CreatedDate: '2026-10-01T09:00:00.000+0000',
              CloseDate: '2026-11-01',
              CurrencyIsoCode: 'GBP',
              Account: { attributes: { type: 'Account' }, Website: 'https://www.initech.example/about' },
            }),
            opp('006B', '2026-11-02T10:00:00.000+0000', {
              Name: 'Lost',
              Amount: null,
              StageName: 'Closed Lost',
              IsWon: false,
              IsClosed: true,
              CreatedDate: '2026-10-02T09:00:00.000+0000',
              CloseDate: '2026-11-02',
              CurrencyIsoCode: 'USD',
              Account: null,
            }),
          ],
        },
      },
      [`${DATA}/query/01gD0000002HU6KIAW-2000`]: {
        body: {
          totalSize: 3,
          done: true,
          records: [
            opp('006C', '2026-11-03T10:00:00.000+0000', {
              Name: 'Open',
              Amount: 12.345,
              StageName: 'Prospecting',
              IsWon: false,
              IsClosed: false,
              CreatedDate: '2026-10-03T09:00:00.000+0000',
              CloseDate: '2026-12-01',
              CurrencyIsoCode: 'USD',
              Account: { Website: 'initech.example' },
            }),
          ],
        },
      },
    };
    const created = ok(
      await t.req('POST', '/v0/integrations', {
        provider: 'salesforce',
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        instanceUrl: crm.url,
      }),
      201,
    );
    integrationId = created.integrationId;
    assert.equal(created.instanceUrl, crm.url);
    const done = await until(t, integrationId, (i) => i.lastSyncAt !== null || i.lastError !== null);
    assert.equal(done.lastError, null, JSON.stringify(done));
    assert.deepEqual(done.counts, { leadsPushed: 2, dealsSynced: 3 });
    assert.equal(crm.seen.filter((s) => s.path === '/services/oauth2/token').length, 1, 'one token a sync');
    const patch = crm.seen.find((s) => s.method === 'PATCH');
    assert.deepEqual(patch?.body, { LastName: 'Hopper', Company: 'sf.example', FirstName: 'Grace', Phone: '+14155550124' });
    const post = crm.seen.find((s) => s.method === 'POST' && s.path === `${DATA}/sobjects/Lead`);
    assert.deepEqual(post?.body, { LastName: 'Solo', Company: 'sf.example', Email: 'solo@sf.example', LeadSource: 'Web' });
    assert.equal(
      crm.seen.some((s) => s.text.includes('hidden') || s.query.get('q')?.includes('hidden')),
      false,
      'the Sec-GPC lead never left',
    );

    const deals = new Map((await events(t, 'deal.created')).map((e) => [e.payload.data.externalId, e.payload.data]));
    assert.equal(deals.get('006A')?.stage, 'won');
    assert.equal(deals.get('006A')?.currency, 'GBP');
    assert.equal(deals.get('006A')?.accountId, account.accountId);
    assert.equal(deals.get('006A')?.createdAt, '2026-10-01T09:00:00.000Z');
    assert.equal(deals.get('006B')?.stage, 'lost');
    assert.equal(deals.get('006B')?.accountId, null);
    assert.equal(deals.get('006C')?.stage, 'open');
    assert.equal(deals.get('006C')?.amount, 12.35);
    assert.equal(deals.get('006C')?.closedAt, null);
    assert.equal(deals.get('006C')?.accountId, account.accountId);
  });

  test('the next sync asks only what changed after the cursor, and pushes no lead twice', async () => {
    const before = crm.seen.length;
    opportunityPages = {};
    const done = await syncNow(t, integrationId);
    assert.equal(done.lastError, null);
    const seen = crm.seen.slice(before);
    const queries = seen.map((s) => s.query.get('q') ?? '').filter((q) => q.includes('FROM Opportunity'));
    assert.equal(queries.length, 1);
    assert.ok(queries[0]?.includes('WHERE LastModifiedDate > 2026-11-03T10:00:00Z'), queries[0]);
    assert.equal(seen.filter((s) => s.path.includes('/sobjects/Lead')).length, 0);
    const row = await t.app.db.selectFrom('integrations').selectAll().where('id', '=', integrationId).executeTakeFirstOrThrow();
    assert.equal(row.secrets.includes(CLIENT_SECRET) || row.secrets.includes(CLIENT_ID), false);
  });

  test('a refused token (invalid_client) pauses it and emits integration.failed', async () => {
    tokenAnswer = { status: 400, body: { error: 'invalid_client', error_description: 'invalid client credentials' } };
    const done = await syncNow(t, integrationId);
    assert.equal(done.status, 'paused');
    assert.match(done.lastError, /invalid_client/);
    const failed = (await events(t, 'integration.failed')).filter((e) => e.payload.data.integrationId === integrationId);
    assert.equal(failed.length, 1);
  });
});
