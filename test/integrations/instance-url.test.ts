import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { expectProblem, ok, startApp, type TestApp } from '../helpers.js';
import { fakeCrm, type FakeCrm } from './helpers.js';

// Issue 45 §10: a Salesforce instanceUrl is https on port 443 on a subdomain of my.salesforce.com,
// force.com or salesforce.com (never the apex), or the origin of SALESFORCE_LOGIN_URL (how the
// tests point it at a local fake). Accepted values are tried on a paused integration, so that no
// sync ever calls them.

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

const create = (instanceUrl: string) =>
  t.req('POST', '/v0/integrations', { provider: 'salesforce', clientId: 'key', clientSecret: 'secret', instanceUrl });

const REFUSED = [
  'https://my.salesforce.com',
  'https://salesforce.com',
  'https://force.com',
  'https://.salesforce.com',
  'https://acme.my.salesforce.com:8443',
  'https://acme.my.salesforce.com:444',
  'http://acme.my.salesforce.com',
  'http://acme.my.salesforce.com:443',
  'https://evil.example',
  'https://evilsalesforce.com',
  'https://salesforce.com.evil.example',
  'https://acme.my.salesforce.com.evil.example',
  'https://acme.my.salesforce.com/services',
  'https://user:pw@acme.my.salesforce.com',
  'ftp://acme.my.salesforce.com',
];

test('instanceUrl refused outside Salesforce subdomains on https:443: 400 at /instanceUrl, on create and on update', async () => {
  const port = Number(new URL(crm.url).port);
  for (const url of [...REFUSED, `http://127.0.0.1:${port + 1}`, `https://127.0.0.1:${port}`]) {
    const res = await create(url);
    assert.equal(res.status, 400, url);
    expectProblem(res, 400, 'validation_failed', ['/instanceUrl']);
  }
  const made = ok(await create(crm.url), 201);
  assert.equal(made.instanceUrl, crm.url, 'the origin of SALESFORCE_LOGIN_URL is accepted');
  const path = `/v0/integrations/${made.integrationId}`;
  ok(await t.req('PATCH', path, { status: 'paused' }));
  for (const url of REFUSED) {
    const res = await t.req('PATCH', path, { instanceUrl: url });
    assert.equal(res.status, 400, url);
    expectProblem(res, 400, 'validation_failed', ['/instanceUrl']);
  }
});

test('instanceUrl accepted on a subdomain of my.salesforce.com, force.com or salesforce.com, port 443 written or not', async () => {
  const made = ok(await create(crm.url), 201);
  const path = `/v0/integrations/${made.integrationId}`;
  ok(await t.req('PATCH', path, { status: 'paused' }));
  const accepted: [string, string][] = [
    ['https://acme.my.salesforce.com', 'https://acme.my.salesforce.com'],
    ['https://acme.my.salesforce.com:443/', 'https://acme.my.salesforce.com'],
    ['https://ACME--dev.sandbox.My.Salesforce.com', 'https://acme--dev.sandbox.my.salesforce.com'],
    ['https://acme.lightning.force.com', 'https://acme.lightning.force.com'],
    ['https://na1.salesforce.com', 'https://na1.salesforce.com'],
  ];
  for (const [url, stored] of accepted) {
    const res = ok(await t.req('PATCH', path, { instanceUrl: url }));
    assert.equal(res.instanceUrl, stored, url);
    assert.equal(res.status, 'paused');
  }
});
