import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ok, startApp, type Json, type TestApp } from '../helpers.js';
import { FakeSalesforce } from './fake-salesforce.js';
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
  t = await startApp(
    { SALESFORCE_LOGIN_URL: crm.url, CRM_SYNC_SECONDS: '3600' },
    { crmSync: { pollMs: 50, sleep: async () => {}, consumeLeads: false } },
  );
});
after(async () => {
  await t.close();
  await crm.close();
});

const existingLeads = new Map([['grace@sf.example', '00Q000000000001']]);
const existingContacts = new Map([['ada@sf.example', '003000000000007']]);
/** Opportunities as a query finds them, once the first test's fixed pages are done. */
const store = new FakeSalesforce();
/** The Tasks created, as sent. */
const tasks: Json[] = [];
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
    const found = /^SELECT Id FROM (Lead|Contact) WHERE Email = '([^']+)' LIMIT 1$/.exec(q);
    if (found) {
      const id = (found[1] === 'Lead' ? existingLeads : existingContacts).get(found[2] as string);
      return { body: { totalSize: id ? 1 : 0, done: true, records: id ? [{ attributes: { type: found[1] }, Id: id }] : [] } };
    }
    if (opportunityPages.first === undefined) {
      const answer = store.query(q);
      assert.ok(answer, q);
      return answer;
    }
    assert.match(
      q,
      /^SELECT Id, Name, Amount, StageName, IsWon, IsClosed, CreatedDate, CloseDate, LastModifiedDate, CurrencyIsoCode, Account\.Website FROM Opportunity ORDER BY LastModifiedDate ASC, Id ASC$/,
    );
    return opportunityPages.first;
  }
  if (seen.method === 'GET' && seen.path.startsWith(`${DATA}/query/`)) return opportunityPages[seen.path] ?? store.more(seen.path);
  if (seen.method === 'POST' && seen.path === `${DATA}/sobjects/Lead`) {
    assert.equal(seen.headers['content-type'], 'application/json');
    assert.ok(seen.body.LastName && seen.body.Company && seen.body.Email);
    assert.equal(existingLeads.has(seen.body.Email) || existingContacts.has(seen.body.Email), false, 'no second record of a known email');
    return { status: 201, body: { id: '00Q000000000999', success: true, errors: [] } };
  }
  if (seen.method === 'POST' && seen.path === `${DATA}/sobjects/Task`) {
    assert.equal(seen.headers['content-type'], 'application/json');
    assert.deepEqual(Object.keys(seen.body).sort(), ['Description', 'Subject', 'WhoId']);
    assert.ok([...existingLeads.values(), ...existingContacts.values()].includes(seen.body.WhoId), 'a Task on a known record');
    tasks.push(seen.body);
    return { status: 201, body: { id: `00T00000000000${tasks.length}`, success: true, errors: [] } };
  }
  // A known Lead or Contact is never patched: a PATCH is an unexpected request (404, seen below).
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

  test('a sync: token, a known Lead or Contact gets a Task and is never patched, a new Lead as typed, opportunities followed through nextRecordsUrl', async () => {
    crm.handle = salesforce;
    const account = ok(await t.req('POST', '/v0/accounts', { name: 'Initech', domain: 'initech.example' }), 201);
    await postLead(t, { name: 'Grace Hopper', email: 'grace@sf.example', phone: '+14155550124' });
    await postLead(t, { name: 'Solo', email: 'solo@sf.example' });
    await postLead(t, { name: 'Evil Hacker', email: 'ada@sf.example', phone: '+19005550155' });
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
    assert.deepEqual(done.counts, { leadsPushed: 3, dealsSynced: 3 });
    assert.equal(crm.seen.filter((s) => s.path === '/services/oauth2/token').length, 1, 'one token a sync');
    // Known records keep their fields: no request sets their name or phone to what was typed.
    assert.equal(crm.seen.filter((s) => s.method === 'PATCH').length, 0, 'nothing patched');
    for (const s of crm.seen.filter((r) => r.method !== 'GET' && r.path.includes('/sobjects/') && r.path !== `${DATA}/sobjects/Task`)) {
      assert.equal(
        s.text.includes('Hopper') || s.text.includes('Hacker') || s.text.includes('0124') || s.text.includes('0155'),
        false,
        s.text,
      );
    }
    const byWho = new Map(tasks.map((task) => [task.WhoId, task]));
    const graceTask = byWho.get('00Q000000000001');
    assert.match(graceTask?.Subject, /^Form on .+/);
    assert.match(graceTask?.Description, /Name: Grace Hopper\nEmail: grace@sf\.example\nPhone: \+14155550124/);
    assert.match(graceTask?.Description, / at \d{4}-\d\d-\d\dT\d\d:\d\d/);
    const adaTask = byWho.get('003000000000007');
    assert.match(adaTask?.Description, /Name: Evil Hacker/);
    assert.match(adaTask?.Description, /Phone: \+19005550155/);
    assert.equal(tasks.length, 2);
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
    assert.ok(
      queries[0]?.includes("WHERE LastModifiedDate > 2026-11-03T10:00:00Z OR (LastModifiedDate = 2026-11-03T10:00:00Z AND Id > '006C')"),
      queries[0],
    );
    assert.equal(seen.filter((s) => s.path.includes('/sobjects/Lead')).length, 0);
    const row = await t.app.db.selectFrom('integrations').selectAll().where('id', '=', integrationId).executeTakeFirstOrThrow();
    assert.equal(row.secrets.includes(CLIENT_SECRET) || row.secrets.includes(CLIENT_ID), false);
  });

  test('keyset: an opportunity of the cursor second with a later Id is read; those up to the cursor are not read again', async () => {
    const second = '2026-11-03T10:00:00.000+0000';
    store.opportunities.push(
      { Id: '006B', LastModifiedDate: second, Name: 'Read before, changed name' },
      { Id: '006C', LastModifiedDate: second, Name: 'The cursor, changed name' },
      { Id: '006D', LastModifiedDate: second, Name: 'Same second, not read yet' },
      { Id: '006E', LastModifiedDate: '2026-11-03T10:00:01.000+0000', Name: 'A second later' },
    );
    const done = await syncNow(t, integrationId);
    assert.equal(done.lastError, null);
    const created = (await events(t, 'deal.created')).map((e) => e.payload.data.externalId);
    assert.ok(created.includes('006D') && created.includes('006E'), String(created));
    assert.equal((await events(t, 'deal.updated')).length, 0, '006B and 006C are not read again');
    assert.equal(done.counts.dealsSynced, 5);
    // Nothing new: the next query starts after 006E, and the count stays.
    const again = await syncNow(t, integrationId);
    assert.equal(again.counts.dealsSynced, 5);
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
