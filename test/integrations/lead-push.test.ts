import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ok, startApp, type TestApp } from '../helpers.js';
import { FakeHubSpot } from './fake-hubspot.js';
import { fakeCrm, type FakeCrm, postLead, type Seen, until } from './helpers.js';

// Issue 47 §3: the CRM push is the outbox's `crm` consumer. A lead is pushed when it comes, not at
// the next scheduled sync (an hour here), and a sync asked for while one runs is not lost when it ends.

const TOKEN = 'pat-na1-0b1c2d3e-secret-hubspot-token';
const HOUR_LEFT = 50 * 60 * 1000;

let t: TestApp;
let crm: FakeCrm;
const hub = new FakeHubSpot();
/** While set, a deals search waits for it: a sync held in the middle. */
let hold: Promise<void> | undefined;

before(async () => {
  crm = await fakeCrm();
  crm.handle = async (seen: Seen) => {
    assert.equal(seen.headers.authorization, `Bearer ${TOKEN}`);
    if (`${seen.method} ${seen.path}` === 'GET /crm/v3/properties/contacts')
      return { body: { results: [{ name: 'email' }, { name: 'firstname' }] } };
    if (seen.path === '/crm/v3/objects/deals/search' && hold) await hold;
    return hub.handle(seen);
  };
  t = await startApp({ HUBSPOT_API_URL: crm.url, CRM_SYNC_SECONDS: '3600' }, { crmSync: { pollMs: 50, sleep: async () => {} } });
});
after(async () => {
  await t.close();
  await crm.close();
});

const searches = () => crm.seen.filter((s) => s.path === '/crm/v3/objects/deals/search').length;
async function waitFor(what: string, done: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!done()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('the CRM push as an outbox consumer', () => {
  let integrationId: string;

  test('a lead posted after a sync reaches the CRM at once, and the next sync stays an hour away', async () => {
    integrationId = ok(await t.req('POST', '/v0/integrations', { provider: 'hubspot', accessToken: TOKEN }), 201).integrationId;
    const synced = await until(t, integrationId, (i) => i.lastSyncAt !== null || i.lastError !== null);
    assert.equal(synced.lastError, null);
    assert.ok(Date.parse(synced.nextSyncAt) - Date.now() > HOUR_LEFT, `next sync in an hour: ${synced.nextSyncAt}`);

    await postLead(t, { name: 'Grace Hopper', email: 'grace@navy.example' });
    await postLead(t, { name: 'Private Person', email: 'private@navy.example' }, true);
    await waitFor('the lead in the CRM', () => hub.contacts.has('grace@navy.example'));
    const pushed = await until(t, integrationId, (i) => i.counts.leadsPushed === 1 && i.lastSyncAt !== synced.lastSyncAt);
    assert.ok(Date.parse(pushed.nextSyncAt) - Date.now() > HOUR_LEFT, `then an hour again: ${pushed.nextSyncAt}`);
    assert.equal(
      crm.seen.some((s) => s.text.includes('private@')),
      false,
      'a Sec-GPC lead makes the sync due, and still never leaves',
    );
  });

  test('a sync asked for while one runs is run when it ends, not an hour later', async () => {
    let release = () => {};
    hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    const before = searches();
    ok(await t.req('POST', `/v0/integrations/${integrationId}/sync`), 202);
    await waitFor('the sync to reach the deals', () => searches() > before);
    // Asked for again while the first holds its lease: due now, past the due it was claimed at.
    ok(await t.req('POST', `/v0/integrations/${integrationId}/sync`), 202);
    hold = undefined;
    release();
    await waitFor('a second sync after the first', () => searches() > before + 1, 10_000);
    const done = await until(t, integrationId, (i) => Date.parse(i.nextSyncAt) - Date.now() > HOUR_LEFT);
    assert.equal(done.lastError, null);
  });
});
