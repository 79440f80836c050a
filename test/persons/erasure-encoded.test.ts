import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { type Json, ok, onPostgres, startApp, type TestApp } from '../helpers.js';
import { USER_AGENT } from '../browser.js';
import { fallbackHost, link, visit } from '../site/serve-helpers.js';

// Issue 45 §5: erasure finds a person however their address was written (every byte
// percent-encoded, encoded again, behind a malformed escape), and in another person's record.

let t: TestApp;
let host: string;
before(async () => {
  t = await startApp();
  host = await fallbackHost(t);
});
after(async () => {
  await t.close();
});

/** Every byte of `text` as a percent escape, `%7A%65%6C…` (upper-case hex) or `%7a%65%6c…`. */
const everyByte = (text: string, hex: 'upper' | 'lower' = 'upper') =>
  [...Buffer.from(text)].map((b) => `%${b.toString(16).padStart(2, '0')}`[hex === 'upper' ? 'toUpperCase' : 'toLowerCase']()).join('');

let n = 0;
/** Letters only, so no slug or case change hides them. */
function probe() {
  n++;
  const tag = `${'abcdefgh'[n % 8]}${Date.now()
    .toString(36)
    .replace(/\d/g, (d) => 'qrstuvwxyz'[Number(d)] ?? 'q')}`;
  return { tag, name: `Yara Quendel${tag}`, email: `yq${tag}@ex.org` };
}

/** Every row of every table, as lowercase text. */
async function dump(): Promise<string> {
  const tables = onPostgres
    ? (
        await sql<{ name: string }>`select table_name as name from information_schema.tables
          where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(t.app.db)
      ).rows
    : (await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(t.app.db)).rows;
  const parts: string[] = [];
  for (const { name } of tables) {
    const rows = (await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(t.app.db)).rows;
    for (const row of rows)
      for (const value of Object.values(row)) parts.push(Buffer.isBuffer(value) ? value.toString('latin1') : String(value));
  }
  return parts.join('\n').toLowerCase();
}

async function erase(personId: string) {
  const res = await t.req('DELETE', `/v0/persons/${personId}`);
  assert.equal(res.status, 204, res.text);
}

const FORM_ACTION = { purpose: 'lead', buttonTitle: 'Send', actionType: 'form', url: '' };

/** A published page with a lead form, served at a path of its own: its HTML and that path. */
async function servedForm(tag: string) {
  const page = ok(
    await t.req('POST', '/v0/pages', {
      name: `Encoded ${tag}`,
      title: 'Welcome',
      pageContext: 'ctx',
      pageType: 'inbound',
      status: 'published',
      actions: [FORM_ACTION],
    }),
    201,
  );
  const audience = ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, {}), 201);
  const path = `/encoded-${tag}`;
  await link(t, path, { targetType: 'audience', audienceId: audience.audienceId });
  const html = String((await visit(t, host, path, { headers: { 'user-agent': USER_AGENT } })).body);
  return { page, audience, path, html };
}

describe('erasure: an address written with every byte percent-encoded (issue 45 §5)', () => {
  test('in utmTerm, pageUrl, analyticsSessionId and a pam.track name: gone from sessions, visit events, rollups and event payloads', async () => {
    const p = probe();
    const yara = ok(await t.req('POST', '/v0/persons', { name: p.name, email: p.email }), 201);
    const other = probe();
    const { page, audience, html } = await servedForm(p.tag);

    const forms = {
      upper: everyByte(p.email),
      lower: everyByte(p.email, 'lower'),
      twice: everyByte(everyByte(p.email)),
      // A stray escape that starts no character, then the address: the rest still decodes.
      stray: `%FF%C3${everyByte(p.email)}`,
    };
    const session = (fields: Record<string, unknown>) =>
      t.req('POST', `/v0/pages/${page.pageId}/audience_sessions`, {
        audienceId: audience.audienceId,
        analyticsSessionId: `s-${Math.random()}`,
        pageUrl: 'https://x.example/p',
        sessionStartedAt: '2026-11-20T10:00:00Z',
        sessionEndedAt: '2026-11-20T10:01:00Z',
        totalClicksCount: 2,
        ...fields,
      });
    const byTerm = ok(await session({ utmTerm: forms.upper, utmSource: 'news' }), 201);
    const byUrl = ok(await session({ pageUrl: `https://x.example/p?who=${forms.twice}` }), 201);
    const byId = ok(await session({ analyticsSessionId: `s-${forms.lower}` }), 201);
    const byCampaign = ok(await session({ utmCampaign: forms.stray }), 201);
    // Someone else's address, encoded alike, stays.
    const kept = ok(await session({ utmTerm: everyByte(other.email), pageUrl: `https://x.example/p?who=${everyByte(other.email)}` }), 201);

    const token = JSON.parse(/id="pam-view">([^<]*)</.exec(html)?.[1] ?? '{}').token;
    const reported = await visit(t, host, '/_pam/collect', {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'user-agent': USER_AGENT },
      payload: JSON.stringify({
        token,
        visibleMs: 1000,
        scroll: 10,
        clicks: 1,
        questions: 0,
        conversions: 0,
        events: [
          [forms.upper, 1, 1],
          [`mail ${forms.lower}`, 1, 1],
          [`signup ${everyByte(other.email)}`, 1, 1],
        ],
        actions: [],
      }),
      remoteAddress: '198.51.100.77',
    });
    assert.equal(reported.statusCode, 204, reported.body);
    const trackNames = async () =>
      (await t.app.db.selectFrom('visit_events').select('name').where('audience_id', '=', audience.audienceId).execute()).map(
        (r) => r.name,
      );
    assert.ok((await trackNames()).includes(forms.upper), 'the track name is stored as sent');

    const campaignGroups = async () =>
      (
        ok(
          await t.req(
            'GET',
            `/v0/pages/${page.pageId}/analytics?groupBy=utmCampaign&startDate=2026-11-20T00:00:00Z&endDate=2026-11-21T00:00:00Z`,
          ),
        ).groups as Json[]
      ).map((g) => String(g.key));
    assert.ok((await campaignGroups()).includes(forms.stray), 'the rollup holds the encoded campaign before');
    const before = await dump();
    for (const form of Object.values(forms)) assert.ok(before.includes(form.toLowerCase()), `planted: ${form}`);

    await erase(yara.personId);

    const sessions = new Map(
      (ok(await t.req('GET', `/v0/pages/${page.pageId}/audience_sessions?limit=100`)).items as Json[]).map((s) => [s.audienceSessionId, s]),
    );
    assert.equal(sessions.get(byTerm.audienceSessionId)?.utmTerm, '');
    assert.equal(sessions.get(byTerm.audienceSessionId)?.utmSource, 'news', 'what names no one stays');
    assert.equal(sessions.get(byUrl.audienceSessionId)?.pageUrl, '');
    assert.equal(sessions.get(byId.audienceSessionId)?.analyticsSessionId, '');
    assert.equal(sessions.get(byCampaign.audienceSessionId)?.utmCampaign, '');
    assert.equal(sessions.get(byTerm.audienceSessionId)?.totalClicksCount, 2, 'the counts stay');
    assert.equal(sessions.get(kept.audienceSessionId)?.utmTerm, everyByte(other.email), "another person's address stays");
    assert.ok(!(await campaignGroups()).includes(forms.stray), 'the rollup row moved');
    const names = await trackNames();
    assert.ok(!names.includes(forms.upper) && !names.includes(`mail ${forms.lower}`));
    assert.ok(names.includes(`signup ${everyByte(other.email)}`), "another person's track name stays");

    const afterwards = await dump();
    for (const form of [p.email, ...Object.values(forms), everyByte(p.email).replaceAll('%', '%25')]) {
      const at = afterwards.indexOf(form.toLowerCase());
      assert.equal(at, -1, `no trace of ${form}: ${afterwards.slice(Math.max(0, at - 150), at + 100)}`);
    }
    assert.ok(afterwards.includes(everyByte(other.email).toLowerCase()));
  });
});

describe("erasure: an address in someone else's record (issue 45 §5)", () => {
  test("a visitor who typed Yara's address as their name: that name, its slug and slug counters lose it, search no longer finds it", async () => {
    const p = probe();
    const yara = ok(await t.req('POST', '/v0/persons', { name: p.name, email: p.email }), 201);
    // The visitor types Yara's address as their name, and their own as their email.
    const { html } = await servedForm(`${p.tag}x`);
    const hidden = (name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html)?.[1] ?? '';
    const visitorEmail = `visitor.${p.tag}@elsewhere.example`;
    const posted = await visit(t, host, '/_pam/forms', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        token: hidden('token'),
        action: hidden('action'),
        path: hidden('path'),
        name: p.email.toUpperCase(),
        email: visitorEmail,
      }).toString(),
    });
    assert.equal(posted.statusCode, 303, posted.body);
    const search = async (text: string) =>
      (ok(await t.req('GET', `/v0/persons/search?query=${encodeURIComponent(text)}&limit=100`)).items as Json[]).map((x) => x.personId);
    const [typed] = (ok(await t.req('GET', `/v0/persons/search?query=${encodeURIComponent(visitorEmail)}`)).items as Json[]) ?? [];
    assert.ok(typed, 'the form made a person');
    assert.equal(typed.name, p.email.toUpperCase());
    const addressSlug = p.email.replace(/[^a-z0-9]+/g, '-');
    assert.equal(typed.slug, addressSlug);
    // One more, made through the API: the address inside a longer name, and a slug counter taken twice.
    const noted = ok(await t.req('POST', '/v0/persons', { name: `Contact ${p.email} (Acme)` }), 201);
    const again = ok(await t.req('POST', '/v0/persons', { name: p.email }), 201);
    assert.equal(again.slug, `${addressSlug}-2`);
    // A name changed to hold the address keeps its slug, which never held it.
    const renamed = ok(await t.req('POST', '/v0/persons', { name: `Bob Renamed ${p.tag}` }), 201);
    ok(await t.req('PATCH', `/v0/persons/${renamed.personId}`, { name: `Bob ${p.email.toUpperCase()}` }));
    // A person who merely shares Yara's first name is not touched.
    const namesake = ok(await t.req('POST', '/v0/persons', { name: 'Yara', email: `yara.${p.tag}@other.example` }), 201);
    assert.ok((await search(p.email)).includes(typed.personId));

    await erase(yara.personId);

    const read = async (id: string) => ok(await t.req('GET', `/v0/persons/${id}`));
    const typedNow = await read(typed.personId);
    assert.equal(typedNow.name, '');
    assert.equal(typedNow.email, visitorEmail, 'their own email stays');
    assert.ok(!typedNow.slug.includes(addressSlug), typedNow.slug);
    assert.match(typedNow.slug, /^person(-\d+)?$/);
    const notedNow = await read(noted.personId);
    assert.equal(notedNow.name, 'Contact (Acme)');
    assert.match(notedNow.slug, /^contact-acme(-\d+)?$/);
    assert.equal((await read(again.personId)).name, '');
    const renamedNow = await read(renamed.personId);
    assert.deepEqual([renamedNow.name, renamedNow.slug], ['Bob', renamed.slug]);
    assert.deepEqual(await read(namesake.personId), namesake);
    assert.deepEqual(await search(p.email), []);
    assert.deepEqual(await search(p.email.split('@')[0]!), []);
    const counters = await t.app.db.selectFrom('slug_counters').select('base').where('base', 'like', `%${addressSlug}%`).execute();
    assert.deepEqual(
      counters.map((c) => c.base),
      [],
      'no slug counter holds the address',
    );
    const updated = (ok(await t.req('GET', '/v0/events?type=person.updated&limit=100')).items as Json[]).filter(
      (e) => e.payload.data?.personId === typed.personId,
    );
    assert.equal(updated.length, 1, 'the change is announced');
    const afterwards = await dump();
    const at = afterwards.indexOf(p.email);
    assert.equal(at, -1, `no trace of the address: ${afterwards.slice(Math.max(0, at - 150), at + 100)}`);
    assert.equal(afterwards.indexOf(addressSlug), -1, 'no trace of its slug');
  });
});
