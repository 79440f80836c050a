import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ok, startApp, type Json, type TestApp } from '../helpers.js';
import { FakeHubSpot } from './fake-hubspot.js';
import { type Answer, fakeCrm, type FakeCrm, postLead, type Seen, syncNow, until } from './helpers.js';

// Issue 45: a visitor never rewrites a HubSpot contact, and the deals' numbers are right. HubSpot
// is played by FakeHubSpot (fake-hubspot.ts), which keeps contacts, notes and deals as documented.

const TOKEN = 'pat-na1-45454545-integrity-hubspot-token';
const PROPERTIES: Answer = {
  body: { results: [{ name: 'email' }, { name: 'firstname' }, { name: 'pam_last_page' }, { name: 'pam_last_audience' }] },
};

let t: TestApp;
let crm: FakeCrm;
const hub = new FakeHubSpot();
before(async () => {
  crm = await fakeCrm();
  crm.handle = (seen: Seen) => {
    assert.equal(seen.headers.authorization, `Bearer ${TOKEN}`, `${seen.method} ${seen.path}`);
    if (seen.method === 'POST') assert.equal(seen.headers['content-type'], 'application/json');
    if (`${seen.method} ${seen.path}` === 'GET /crm/v3/properties/contacts') return PROPERTIES;
    if (seen.path.startsWith('/crm/v4/associations/deals/companies/')) return { body: { status: 'COMPLETE', results: [] } };
    return hub.handle(seen);
  };
  t = await startApp(
    { HUBSPOT_API_URL: crm.url, CRM_SYNC_SECONDS: '3600' },
    { crmSync: { pollMs: 50, sleep: async () => {}, consumeLeads: false } },
  );
});
after(async () => {
  await t.close();
  await crm.close();
});

/** Every contact write the sync sent, as (contact id or email, properties). */
const contactWrites = () =>
  crm.seen
    .filter((s) => s.path === '/crm/v3/objects/contacts/batch/upsert' || s.path === '/crm/v3/objects/contacts/batch/update')
    .flatMap((s) => (s.body.inputs as Json[]).map((i) => ({ id: String(i.id), properties: i.properties as Record<string, string> })));

describe('HubSpot: a visitor never rewrites a contact (issue 45)', () => {
  let integrationId: string;
  const known = hub.contact('ada@known.example', { firstname: 'Ada', lastname: 'Lovelace', phone: '+14155550100', company: '' });
  const partial = hub.contact('grace@known.example', { firstname: '', lastname: 'Hopper', phone: '', company: 'Navy' });

  test('a known email: its name and phone stay, the empty ones are filled, what differs goes on a note; a new email is created as typed', async () => {
    await postLead(t, { name: 'Evil <b>Hacker</b>', email: 'ADA@known.example', phone: '+1 900 555 0100' });
    await postLead(t, { name: 'Grace Hopper', email: 'grace@known.example', phone: '+14155550199' });
    await postLead(t, { name: 'New Person', email: 'new@fresh.example', phone: '+14155550111' });
    await postLead(t, { name: 'First Try', email: 'twice@fresh.example' });
    await postLead(t, { name: 'Second Try', email: 'twice@fresh.example' });
    const created = ok(await t.req('POST', '/v0/integrations', { provider: 'hubspot', accessToken: TOKEN }), 201);
    integrationId = created.integrationId;
    const done = await until(t, integrationId, (i) => i.lastSyncAt !== null || i.lastError !== null);
    assert.equal(done.lastError, null, JSON.stringify(done));

    // Asked first, by email, lower-cased once each.
    const [read] = crm.seen.filter((s) => s.path === '/crm/v3/objects/contacts/batch/read');
    assert.deepEqual(
      read?.body.inputs.map((i: Json) => i.id),
      ['ada@known.example', 'grace@known.example', 'new@fresh.example', 'twice@fresh.example'],
    );

    // No request sets a known contact's name or phone to what a visitor typed.
    for (const write of contactWrites().filter((w) => w.id === known.id || w.id.toLowerCase() === 'ada@known.example')) {
      for (const name of ['firstname', 'lastname', 'phone', 'email'])
        assert.equal(write.properties[name], undefined, `${name} sent for the known contact`);
    }
    assert.equal(known.properties.firstname, 'Ada');
    assert.equal(known.properties.lastname, 'Lovelace');
    assert.equal(known.properties.phone, '+14155550100');
    assert.equal(known.properties.email, 'ada@known.example');
    assert.equal(known.properties.company, 'known.example', 'an empty property is filled');
    assert.ok(known.properties.pam_last_page, 'pam_last_page is set');
    // Grace: only her empty first name and phone are filled; her company stays.
    assert.equal(partial.properties.firstname, 'Grace');
    assert.equal(partial.properties.phone, '+14155550199');
    assert.equal(partial.properties.lastname, 'Hopper');
    assert.equal(partial.properties.company, 'Navy');

    // The note: on Ada, with the page, the time and the typed values, escaped (HubSpot's note body is HTML).
    const adaNotes = hub.notes.filter((n) => n.contactId === known.id);
    assert.equal(adaNotes.length, 1);
    const body = adaNotes[0]?.properties.hs_note_body ?? '';
    assert.match(body, /Form on .+ at \d{4}-\d\d-\d\dT\d\d:\d\d/);
    assert.ok(body.replace(/\D/g, '').includes('19005550100'), body);
    assert.ok(body.includes('Evil'), body);
    assert.ok(body.includes('&lt;b&gt;Hacker&lt;/b&gt;'), body);
    assert.equal(body.includes('<b>'), false, 'typed markup is text, never markup');
    assert.equal(body.includes('Lovelace'), false, 'only what was typed');
    // Grace's note: her company typed (her domain) differs from "Navy".
    const graceNotes = hub.notes.filter((n) => n.contactId === partial.id);
    assert.equal(graceNotes.length, 1);
    assert.equal(graceNotes[0]?.properties.hs_note_body?.includes('known.example'), true);
    assert.equal(graceNotes[0]?.properties.hs_note_body?.includes('Grace'), false, 'a filled value is no difference');

    // A new lead arrives with its typed name and phone.
    const fresh = hub.contacts.get('new@fresh.example');
    assert.equal(fresh?.properties.firstname, 'New');
    assert.equal(fresh?.properties.lastname, 'Person');
    assert.equal(fresh?.properties.phone, '+14155550111');
    // An email twice in one batch: created by the first lead; the second waits for the next round.
    assert.equal(hub.contacts.get('twice@fresh.example')?.properties.firstname, 'First');
    assert.equal(done.counts.leadsPushed, 4);
  });

  test('the second lead of an email created in the same round goes on a note next round, never over the first', async () => {
    const done = await syncNow(t, integrationId);
    assert.equal(done.lastError, null);
    assert.equal(done.counts.leadsPushed, 5);
    const twice = hub.contacts.get('twice@fresh.example');
    assert.equal(twice?.properties.firstname, 'First');
    assert.equal(twice?.properties.lastname, 'Try');
    const notes = hub.notes.filter((n) => n.contactId === twice?.id);
    assert.equal(notes.length, 1);
    assert.ok(notes[0]?.properties.hs_note_body?.includes('Second'));
  });
});

describe('HubSpot: the deals read (issue 45)', () => {
  let integrationId: string;
  const TIE = Date.parse('2026-11-10T12:00:00.000Z');
  const BEFORE = 30;
  const TIED = 250;

  test('250 deals with one modified time, after 30 others: each written once, dealsSynced counts distinct deals', async () => {
    for (let i = 0; i < BEFORE; i++) hub.deals.push({ id: String(2000 + i), modified: TIE - (BEFORE - i) * 1000 });
    for (let i = 0; i < TIED; i++) hub.deals.push({ id: String(3000 + i), modified: TIE });
    const created = ok(await t.req('POST', '/v0/integrations', { provider: 'hubspot', accessToken: TOKEN }), 201);
    integrationId = created.integrationId;
    const done = await until(t, integrationId, (i) => i.lastSyncAt !== null || i.lastError !== null);
    assert.equal(done.lastError, null, JSON.stringify(done));
    assert.equal(done.counts.dealsSynced, BEFORE + TIED);
    const createdEvents = (await all(t, '/v0/events?type=deal.created')).map((e) => e.payload.data.externalId);
    assert.equal(createdEvents.length, BEFORE + TIED);
    assert.equal(new Set(createdEvents).size, BEFORE + TIED);
    assert.equal((await all(t, '/v0/events?type=deal.updated')).length, 0);
    // The tie is read by id, paged with `after`.
    const tieSearches = hub.searches.filter((s) => s.body.filterGroups?.[0]?.filters?.[0]?.operator === 'EQ');
    assert.deepEqual(
      tieSearches.map((s) => s.body.after),
      [undefined, '100', '200'],
    );
    assert.deepEqual(
      tieSearches.flatMap((s) => s.ids),
      Array.from({ length: TIED }, (_, i) => String(3000 + i)),
    );
  });

  test('syncs again read nothing again and the count stays; a deal changed is read once more and still counts once', async () => {
    const before = hub.searches.length;
    let done = await syncNow(t, integrationId);
    assert.equal(done.counts.dealsSynced, BEFORE + TIED);
    assert.deepEqual(
      hub.searches.slice(before).flatMap((s) => s.ids),
      [],
      'the tie is not read again',
    );
    const changed = hub.deals.find((d) => d.id === '2005');
    assert.ok(changed);
    changed.modified = TIE + 60_000;
    changed.properties = { dealname: 'Renamed' };
    done = await syncNow(t, integrationId);
    assert.equal(done.lastError, null);
    assert.equal(done.counts.dealsSynced, BEFORE + TIED, 'a deal read twice counts once');
    done = await syncNow(t, integrationId);
    assert.equal(done.counts.dealsSynced, BEFORE + TIED);
    const updated = (await all(t, '/v0/events?type=deal.updated')).map((e) => e.payload.data);
    assert.deepEqual(
      updated.map((d) => [d.externalId, d.name]),
      [['2005', 'Renamed']],
    );
  });
});

async function all(app: TestApp, path: string): Promise<Json[]> {
  const items: Json[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = ok(await app.req('GET', `${path}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`));
    items.push(...page.items);
    if (!page.hasMore) return items;
    cursor = page.nextCursor;
  }
}
