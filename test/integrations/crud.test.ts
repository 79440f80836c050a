import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, ok, startApp, type Json, type TestApp } from '../helpers.js';
import { fakeCrm, type FakeCrm, until } from './helpers.js';

// The integrations resource through HTTP: bounds, provider fields, tenancy, pause, delete.

let t: TestApp;
let crm: FakeCrm;
before(async () => {
  crm = await fakeCrm();
  // Every sync finds an empty portal: these tests are about the resource.
  crm.handle = (seen) => (seen.method === 'GET' ? { body: { results: [] } } : { body: { results: [] } });
  t = await startApp({ HUBSPOT_API_URL: crm.url, CRM_SYNC_SECONDS: '3600' }, { crmSync: { pollMs: 50, sleep: async () => {} } });
});
after(async () => {
  await t.close();
  await crm.close();
});

const hubspot = (token = 'pat-na1-token') => t.req('POST', '/v0/integrations', { provider: 'hubspot', accessToken: token });

describe('integrations', () => {
  test('bounds: token 1 to 1024 visible characters; unknown provider and fields refused at their pointer', async () => {
    ok(await hubspot('x'), 201);
    ok(await hubspot('x'.repeat(1024)), 201);
    expectProblem(await hubspot(''), 400, 'validation_failed', ['/accessToken']);
    expectProblem(await hubspot('x'.repeat(1025)), 400, 'validation_failed', ['/accessToken']);
    expectProblem(await hubspot('has space'), 400, 'validation_failed', ['/accessToken']);
    expectProblem(await t.req('POST', '/v0/integrations', { provider: 'pipedrive', accessToken: 'x' }), 400, 'validation_failed', [
      '/provider',
    ]);
    expectProblem(await t.req('POST', '/v0/integrations', { provider: 'hubspot' }), 400, 'validation_failed', ['/accessToken']);
    expectProblem(await t.req('POST', '/v0/integrations', { provider: 'hubspot', accessToken: 'x', extra: 1 }), 400, 'validation_failed', [
      '/extra',
    ]);
    expectProblem(
      await t.req('POST', '/v0/integrations', {
        provider: 'salesforce',
        clientId: 'a',
        clientSecret: 'b',
        instanceUrl: 'https://acme.my.salesforce.com/path',
      }),
      400,
      'validation_failed',
      ['/instanceUrl'],
    );
    const sf = ok(
      await t.req('POST', '/v0/integrations', {
        provider: 'salesforce',
        clientId: 'a',
        clientSecret: 'b',
        instanceUrl: 'https://Acme.my.salesforce.com/',
      }),
      201,
    );
    assert.equal(sf.instanceUrl, 'https://acme.my.salesforce.com');
  });

  test('list, get, another tenant sees none of them (404), and nothing secret is shown', async () => {
    const made = ok(await hubspot('pat-list-secret'), 201);
    const list = ok(await t.req('GET', '/v0/integrations?limit=100'));
    assert.ok(list.items.some((i: Json) => i.integrationId === made.integrationId));
    assert.equal(JSON.stringify(list).includes('pat-list-secret'), false);
    const other = await t.newTenant('Other');
    expectProblem(await t.req('GET', `/v0/integrations/${made.integrationId}`, undefined, { key: other.key }), 404, 'not_found');
    expectProblem(
      await t.req('PATCH', `/v0/integrations/${made.integrationId}`, { status: 'paused' }, { key: other.key }),
      404,
      'not_found',
    );
    expectProblem(await t.req('POST', `/v0/integrations/${made.integrationId}/sync`, undefined, { key: other.key }), 404, 'not_found');
    expectProblem(await t.req('DELETE', `/v0/integrations/${made.integrationId}`, undefined, { key: other.key }), 404, 'not_found');
    assert.equal(ok(await t.req('GET', '/v0/integrations', undefined, { key: other.key })).items.length, 0);
  });

  test('pause: no sync (409 when asked), resume; a read sent back changes nothing; read-only fields are compared', async () => {
    const made = ok(await hubspot(), 201);
    const path = `/v0/integrations/${made.integrationId}`;
    const paused = ok(await t.req('PATCH', path, { status: 'paused' }));
    assert.equal(paused.status, 'paused');
    assert.equal(paused.nextSyncAt, null);
    expectProblem(await t.req('POST', `${path}/sync`), 409, 'conflict');
    const read = ok(await t.req('GET', path));
    assert.equal(ok(await t.req('PATCH', path, read)).updatedAt, read.updatedAt);
    expectProblem(await t.req('PATCH', path, { provider: 'salesforce' }), 400, 'validation_failed', ['/provider']);
    expectProblem(await t.req('PATCH', path, { clientId: 'x' }), 400, 'validation_failed', ['/clientId']);
    const resumed = ok(await t.req('PATCH', path, { status: 'active' }));
    assert.equal(resumed.status, 'active');
    ok(await t.req('POST', `${path}/sync`), 202);
  });

  test('delete: 204, then 404', async () => {
    const made = ok(await hubspot(), 201);
    const path = `/v0/integrations/${made.integrationId}`;
    assert.equal((await t.req('DELETE', path)).status, 204);
    expectProblem(await t.req('GET', path), 404, 'not_found');
    expectProblem(await t.req('DELETE', path), 404, 'not_found');
  });

  // Another instance is played by the lease it holds on the row: held, the sync is not run twice;
  // its holder killed (kill -9), the lease simply ends and the next sync resumes from the saved cursor.
  test("a sync held by another instance is left alone; a dead holder's lease ends and the next resumes from the cursor", async () => {
    const made = ok(await hubspot(), 201);
    const first = await until(t, made.integrationId, (i) => i.lastSyncAt !== null);
    const cursor = '2026-11-20T08:00:00.000Z';
    const hold = (ms: number) =>
      t.app.db
        .updateTable('integrations')
        .set({ sync_lease_until: new Date(Date.now() + ms).toISOString(), deal_cursor: cursor })
        .where('id', '=', made.integrationId)
        .execute();
    await hold(60_000);
    const before = crm.seen.length;
    ok(await t.req('POST', `/v0/integrations/${made.integrationId}/sync`), 202);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(crm.seen.length, before, 'nothing sent while another instance holds it');
    await hold(-1000);
    const done = await until(t, made.integrationId, (i) => i.lastSyncAt !== first.lastSyncAt);
    assert.equal(done.lastError, null);
    const search = crm.seen.slice(before).find((s) => s.path === '/crm/v3/objects/deals/search');
    assert.equal(search?.body.filterGroups[0].filters[0].value, String(Date.parse(cursor)));
  });
});
