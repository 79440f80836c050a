import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { expectProblem, onPostgres, startApp, TEST_DATABASE_URL, type Json, type TestApp, ok } from '../helpers.js';
import { until } from '../agent/common.js';
import { fakeOpenAi } from '../agent/fake-openai.js';
import { fallbackHost, link, visit } from '../site/serve-helpers.js';
import { USER_AGENT } from '../browser.js';
import { ERASURE_TABLES, vacuumRecipe } from '../../src/persons/erasure-tables.js';

// Issue 25, "Erasure reaches everything": a person's strings are planted in every place that can
// hold them (the person, logs, a lead form, sessions, events, webhook deliveries, idempotent
// answers, an audience made for them and a version the OpenAI-compatible generator wrote), then
// the person is erased and the database's bytes are searched: the SQLite file after a checkpoint,
// or pg_dump of the test's schema. Nothing may be found.

let t: TestApp;
let host: string;
let fake: Awaited<ReturnType<typeof fakeOpenAi>>;
let receiver: http.Server;
let receiverUrl = '';
/** Every webhook body received, as sent. */
const received: string[] = [];

before(async () => {
  // The generator greets the person by name and quotes what it was told about them.
  fake = await fakeOpenAi((request) => {
    const person = request.inputs?.person;
    const greeting = String(request.inputs?.version?.supplementaryContext ?? '').startsWith('first-name-only')
      ? `Hello ${String(person?.name ?? 'you').split(' ')[0]}`
      : `Hello ${person?.name ?? 'you'}`;
    return {
      content: JSON.stringify({
        headline: greeting,
        subheadline: `Written for ${person?.email ?? 'you'}`,
        sections: [{ heading: 'Reach', body: `${person?.phoneNumber ?? ''} ${person?.linkedinProfileUrl ?? ''}` }],
      }),
    };
  });
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      received.push(body);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  t = await startApp(
    {
      AGENT: 'true',
      AGENT_GENERATOR: 'openai',
      AGENT_OPENAI_BASE_URL: fake.url,
      AGENT_OPENAI_API_KEY: 'sk-test-erasure-0123456789',
      AGENT_OPENAI_MODEL: 'test-model-1',
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2',
    },
    { agent: { pollMs: 20, retryBaseMs: 20 } },
  );
  host = await fallbackHost(t);
  ok(await t.req('POST', '/v0/webhook_subscriptions', { url: receiverUrl, events: ['*'] }), 201);
});
after(async () => {
  await t.close();
  await fake.close();
  await new Promise<void>((resolve) => {
    receiver.closeAllConnections();
    receiver.close(() => resolve());
  });
});

/**
 * The database's bytes as lowercase text: the SQLite file once its WAL is checkpointed into it
 * (deleted-but-not-overwritten pages count), or everything pg_dump writes of the test's schema.
 */
async function databaseBytes(): Promise<string> {
  const db = t.app.config.database;
  if (db.kind === 'sqlite') {
    // No busy wait: this connection shares the app's thread, so while it waited the app's read
    // snapshot (ended on setImmediate, db/sqlite.ts) could not end, and each try took the full
    // timeout. It tries at once, and between tries the app's loop goes on.
    const probe = new SQLite(db.path, { timeout: 0 });
    try {
      for (let i = 0; ; i++) {
        const [result] = probe.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
        if (result?.busy === 0) break;
        assert.ok(i < 250, 'the checkpoint gets through');
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      probe.close();
    }
    const wal = `${db.path}-wal`;
    assert.ok(!fs.existsSync(wal) || fs.statSync(wal).size === 0, 'the WAL is empty after the checkpoint');
    return fs.readFileSync(db.path).toString('latin1').toLowerCase();
  }
  const schema = /search_path=([^,&]+)/.exec(decodeURIComponent(db.url))?.[1];
  assert.ok(schema, 'the test schema is in the URL');
  const { stdout } = await promisify(execFile)('pg_dump', [`--dbname=${TEST_DATABASE_URL}`, `--schema=${schema}`, '--no-owner'], {
    maxBuffer: 256 * 1024 * 1024,
  });
  return stdout.toLowerCase();
}

/** Tables of counters only (of rows, of changes): rewritten by every write, never holding a person's values. */
/** Tables that move on every write, or as the outbox is read, and hold no one: counters and the outbox's cursors. */
const COUNTERS = ['tenant_counters', 'change_counters', 'page_counters', 'event_sequence', 'outbox_consumers', 'outbox_consumed_ahead'];

function schemaOf(db: { kind: string; url?: string }): string | undefined {
  return /search_path=([^,&]+)/.exec(decodeURIComponent(db.url ?? ''))?.[1];
}

/** Where `value` occurs in the bytes: as text, or (pg_dump writes bytea in hex) as its bytes in hex. */
function traceOf(bytes: string, value: string): string | undefined {
  const text = value.toLowerCase();
  const hex = Buffer.from(value).toString('hex');
  const i = bytes.indexOf(text);
  if (i !== -1) return bytes.slice(Math.max(0, i - 200), i + text.length + 100);
  const j = bytes.indexOf(hex);
  return j === -1 ? undefined : `(hex) ${bytes.slice(Math.max(0, j - 100), j + hex.length + 50)}`;
}

let n = 0;
/** Strings no other test plants: letters only, so no slug or case change hides them. */
function probe() {
  n++;
  const tag = `${'abcdefgh'[n % 8]}${Date.now()
    .toString(36)
    .replace(/\d/g, (d) => 'qrstuvwxyz'[Number(d)] ?? 'q')}`;
  const first = `Quillon${tag}`;
  const last = `Zebrastrand${tag}`;
  return {
    tag,
    first,
    last,
    name: `${first} ${last}`,
    email: `${first}.${last}@erasure-probe.example`.toLowerCase(),
    phone: `+1415555${String(1000 + n).slice(-4)}`,
    linkedin: `https://www.linkedin.com/in/${first}-${last}-probe`,
    logText: `Vexmoornote${tag}`,
  };
}
type Probe = ReturnType<typeof probe>;

const FORM_ACTION = { purpose: 'lead', buttonTitle: 'Send', actionType: 'form', url: '' };

/** A person with every kind of data that can name them, through the API and the visitor plane. */
async function plant(p: Probe, generated: 'full-name' | 'first-name-only' = 'full-name') {
  const person = ok(
    await t.req(
      'POST',
      '/v0/persons',
      { name: p.name, email: p.email, phoneNumber: p.phone, domain: 'erasure-probe.example' },
      { headers: { 'idempotency-key': `create-${p.email}` } },
    ),
    201,
  );
  ok(await t.req('PATCH', `/v0/persons/${person.personId}`, { linkedinProfileUrl: p.linkedin }));
  ok(
    await t.req('POST', `/v0/persons/${person.personId}/logs`, {
      source: 'crm',
      type: 'note',
      payload: { text: `${p.logText}: met ${p.name}` },
    }),
    201,
  );
  const page = ok(
    await t.req('POST', '/v0/pages', {
      name: `Erasure page ${p.tag}`,
      title: 'Welcome',
      pageContext: 'ctx',
      pageType: 'inbound',
      status: 'published',
      actions: [FORM_ACTION],
    }),
    201,
  );
  const routeKey = `${p.first.toLowerCase()}-page`;
  const audience = ok(
    await t.req('POST', `/v0/pages/${page.pageId}/audiences`, {
      personId: person.personId,
      personRouteKey: routeKey,
      customName: `For ${p.name}`,
      actionFormInstructionsOverride: `Dear ${p.first}, write to us`,
      actionUrlOverride: `https://calendar.example/${p.last}`,
      metadataOverride: { title: `${p.name} welcome`, robots: ['noindex'] },
      supplementaryContext: `${generated}: context about ${p.name}`,
    }),
    201,
  );
  const path = `/erasure-${p.tag}`;
  const routing = `/routing-${p.tag}`;
  await link(t, path, { targetType: 'audience', audienceId: audience.audienceId });
  await link(t, routing, { targetType: 'page_routing', pageId: page.pageId });

  // The lead form, as a visitor posts it: their email in capitals, their name shouted.
  const html = String((await visit(t, host, `${routing}/${routeKey}`)).body);
  const hidden = (name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html)?.[1] ?? '';
  const posted = await visit(t, host, '/_pam/forms', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      token: hidden('token'),
      action: hidden('action'),
      path: hidden('path'),
      name: p.name.toUpperCase(),
      email: p.email.toUpperCase(),
      phone: p.phone,
    }).toString(),
  });
  assert.equal(posted.statusCode, 303, posted.body);

  // What the measuring script reports of the visit: `pam.track` names and clicked purposes holding
  // their name and email, raw, in capitals and percent-encoded (issue 36's probe).
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
        [`signup ${p.name}`, 1, 5],
        [`newsletter:${encodeURIComponent(p.email.toUpperCase())}`, 1, 0],
      ],
      actions: [[`call ${p.email.toUpperCase()}`, 1]],
    }),
    remoteAddress: `198.51.100.${(n % 200) + 1}`,
  });
  assert.equal(reported.statusCode, 204, reported.body);

  // Sessions reported through the API, on their audience and on another page's.
  const other = ok(await t.req('POST', '/v0/pages', { name: `Other ${p.tag}`, title: 'O', pageContext: 'c', pageType: 'inbound' }), 201);
  const otherAudience = ok(await t.req('POST', `/v0/pages/${other.pageId}/audiences`, {}), 201);
  const session = (pageId: string, audienceId: string, fields: Record<string, unknown>) =>
    t.req('POST', `/v0/pages/${pageId}/audience_sessions`, {
      audienceId,
      analyticsSessionId: `s-${Math.random()}`,
      pageUrl: `https://x.example/p/${routeKey}`,
      sessionStartedAt: '2026-11-20T10:00:00Z',
      sessionEndedAt: '2026-11-20T10:01:00Z',
      totalClicksCount: 3,
      ...fields,
    });
  ok(
    await session(page.pageId, audience.audienceId, {
      utmContent: `Visit by ${p.name.toUpperCase()}`,
      hasFormSubmit: true,
      formSubmissionId: 'form-1',
      formSubmissionIdentifier: p.name,
      formSubmissionEmail: `${p.first.toUpperCase()}.${p.last}@Erasure-Probe.example`,
      formSubmissionPhone: p.phone,
      utmCampaign: `campaign ${p.name}`,
      utmTerm: p.email,
    }),
    201,
  );
  const elsewhere = ok(
    await session(other.pageId, otherAudience.audienceId, {
      pageUrl: `https://x.example/other?who=${encodeURIComponent(p.email)}&name=${p.first}+${p.last}`,
      utmCampaign: `Spring for ${p.email.toUpperCase()}`,
    }),
    201,
  );

  // A version written by the generator, published.
  ok(await t.req('POST', `/v0/pages/${page.pageId}/regenerate`, { audienceIds: [audience.audienceId] }), 202);
  const greeting = generated === 'full-name' ? `Hello ${p.name}` : `Hello ${p.first}`;
  await until('the generated version to be published', async () => {
    const a = ok(await t.req('GET', `/v0/pages/${page.pageId}/audiences/${audience.audienceId}`));
    return a.publishedVersion.content?.headline === greeting;
  });
  // Its event delivered to the receiver: the deliveries carried the greeting.
  await until('the webhook deliveries', async () => received.some((b) => b.includes(greeting)));
  return { person, page, audience, path, routing, routeKey, other, otherAudience, elsewhere, greeting };
}

async function erase(personId: string) {
  const res = await t.req('DELETE', `/v0/persons/${personId}`);
  assert.equal(res.status, 204, res.text);
}

describe('erasure reaches everything', () => {
  test('a grep of the whole database finds none of their strings, in any table, after erasure', async () => {
    const p = probe();
    const kept = probe();
    ok(await t.req('POST', '/v0/persons', { name: kept.name, email: kept.email }), 201);
    const planted = await plant(p);
    const strings = [
      p.name,
      p.first,
      p.last,
      p.email,
      p.phone,
      p.linkedin,
      p.logText,
      planted.greeting,
      planted.routeKey,
      // The forms an address stores them in.
      encodeURIComponent(p.email),
      `${p.first}+${p.last}`,
    ];

    const before = await databaseBytes();
    for (const s of strings) assert.ok(traceOf(before, s), `the grep finds ${s} before the erasure`);

    await erase(planted.person.personId);
    const afterwards = await databaseBytes();
    for (const s of strings) {
      const trace = traceOf(afterwards, s);
      assert.equal(trace, undefined, `no trace of ${s}: ${trace}`);
    }
    assert.ok(traceOf(afterwards, kept.name), 'another person is untouched');
  });

  test('erasure: pam.track names and clicked purposes naming them (raw, escaped, percent-encoded, any case) leave visit_events', async () => {
    const p = probe();
    // A name JSON must escape: a quote and a backslash.
    const name = `${p.first} "Nib\\" ${p.last}`;
    const person = ok(await t.req('POST', '/v0/persons', { name, email: p.email }), 201);
    const page = ok(
      await t.req('POST', '/v0/pages', { name: `Track ${p.tag}`, title: 'T', pageContext: 'c', pageType: 'inbound', status: 'published' }),
      201,
    );
    const audience = ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, {}), 201);
    const path = `/track-${p.tag}`;
    await link(t, path, { targetType: 'audience', audienceId: audience.audienceId });
    const html = String((await visit(t, host, path, { headers: { 'user-agent': USER_AGENT } })).body);
    const token = JSON.parse(/id="pam-view">([^<]*)</.exec(html)?.[1] ?? '{}').token;
    const named = [
      name.toUpperCase(),
      JSON.stringify(name).slice(1, -1),
      encodeURIComponent(p.email).toUpperCase(),
      `lead:${new URLSearchParams({ n: name }).toString()}`,
      `mail ${encodeURIComponent(encodeURIComponent(p.email))}`,
    ];
    const kept = ['signup', `${p.first.slice(0, 2)}-other`];
    const res = await visit(t, host, '/_pam/collect', {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'user-agent': USER_AGENT },
      payload: JSON.stringify({
        token,
        visibleMs: 1000,
        scroll: 10,
        clicks: 2,
        questions: 0,
        conversions: 0,
        events: [...named.slice(0, 3), ...kept].map((e) => [e, 1, 1]),
        actions: named.slice(3).map((a) => [a, 1]),
      }),
      remoteAddress: '198.51.100.251',
    });
    assert.equal(res.statusCode, 204, res.body);
    const names = async () =>
      (await t.app.db.selectFrom('visit_events').select('name').where('audience_id', '=', audience.audienceId).execute())
        .map((r) => r.name)
        .sort();
    // The path twice: the page view, and the visit's deepest scroll (issue 49's scroll goals).
    assert.deepEqual(await names(), [...named, ...kept, path, path].sort());
    await erase(person.personId);
    assert.deepEqual(await names(), [...kept, path, path].sort(), 'what names no one stays');
    const bytes = await databaseBytes();
    for (const s of [p.first, p.last, p.email, encodeURIComponent(p.email)]) assert.equal(traceOf(bytes, s), undefined, `no trace of ${s}`);
  });

  test('erasure: the tables it rewrites are those of the dead-tuple recipe in docs/privacy.md', async () => {
    const docs = fs.readFileSync(new URL('../../docs/privacy.md', import.meta.url), 'utf8');
    assert.ok(docs.includes(`\`${vacuumRecipe()}\``), `docs/privacy.md gives ${vacuumRecipe()}`);
    const p = probe();
    const planted = await plant(p);
    await until(
      'the deliveries so far',
      async () => (await t.app.db.selectFrom('webhook_deliveries').select('id').where('status', '=', 'pending').execute()).length === 0,
    );
    const tables = (await t.app.db.introspection.getTables())
      .filter((table) => !table.isView && !/^sqlite_|_fts/.test(table.name))
      .filter((table) => t.app.config.database.kind === 'sqlite' || schemaOf(t.app.config.database) === table.schema)
      .map((table) => table.name);
    // The recipe is PostgreSQL's: a table of its own (search_postings) is not SQLite's.
    if (onPostgres) for (const table of ERASURE_TABLES) assert.ok(tables.includes(table), `${table} exists`);
    const rows = async (table: string) =>
      new Set((await sql`select * from ${sql.table(table)}`.execute(t.app.db)).rows.map((r) => JSON.stringify(r)));
    const before = new Map<string, Set<string>>();
    for (const table of tables) before.set(table, await rows(table));
    await erase(planted.person.personId);
    const rewritten: string[] = [];
    for (const table of tables) {
      const now = await rows(table);
      if ([...(before.get(table) ?? [])].some((r) => !now.has(r))) rewritten.push(table);
    }
    const missing = rewritten.filter((table) => !(ERASURE_TABLES as readonly string[]).includes(table) && !COUNTERS.includes(table));
    assert.deepEqual(missing, [], 'every table erasure rewrites is in ERASURE_TABLES');
  });

  test("erasure: a generated greeting 'Hello <Name>' keeps no trace", async () => {
    const p = probe();
    // The generator greets by first name only: not the name as stored, yet written for them.
    const planted = await plant(p, 'first-name-only');
    await erase(planted.person.personId);

    const { page, audience } = planted;
    const a = ok(await t.req('GET', `/v0/pages/${page.pageId}/audiences/${audience.audienceId}`));
    assert.equal(a.status, 'archived');
    assert.equal(a.personId, null);
    assert.equal(a.customName, null);
    assert.equal(a.personRouteKey, null);
    assert.equal(a.actionFormInstructionsOverride, null);
    assert.equal(a.actionUrlOverride, null);
    assert.equal(a.metadataOverride, undefined);
    assert.equal(a.supplementaryContext, null);
    assert.match(a.effectiveName, /^Audience \d+$/);
    const versions = ok(await t.req('GET', `/v0/pages/${page.pageId}/audiences/${audience.audienceId}/versions?limit=100`)).items as Json[];
    assert.ok(versions.length >= 2, 'the first version and the generated one');
    for (const v of versions) {
      assert.equal(v.content, null);
      assert.equal(v.supplementaryContext, null);
      assert.equal(v.failureReason, null);
    }
    const bytes = await databaseBytes();
    for (const s of [planted.greeting, p.first]) assert.equal(traceOf(bytes, s), undefined, `no trace of ${s}`);
    // What the API answers holds none of it either: events included.
    const events = (await t.req('GET', '/v0/events?limit=100')).text.toLowerCase();
    assert.ok(!events.includes(p.first.toLowerCase()));
    const archived = (ok(await t.req('GET', '/v0/events?type=audience.archived&limit=100')).items as Json[]).filter(
      (e) => e.payload.data.audienceId === audience.audienceId,
    );
    assert.equal(archived.length, 1, 'the archive is announced, naming no one');
    assert.equal(archived[0].payload.data.personId, null);
  });

  test('their links answer 410 Gone with a neutral noindex page, by link and by route key; never restored', async () => {
    const p = probe();
    const planted = await plant(p);
    await erase(planted.person.personId);
    for (const path of [planted.path, `${planted.routing}/${planted.routeKey}`]) {
      for (const method of ['GET', 'HEAD']) {
        const res = await visit(t, host, path, { method });
        assert.equal(res.statusCode, 410, `${method} ${path}`);
        assert.match(String(res.headers['x-robots-tag']), /noindex/);
        assert.equal(res.headers['cache-control'], 'no-store');
        if (method === 'GET') {
          assert.match(res.body, /<meta name="robots" content="noindex">/);
          assert.ok(!res.body.toLowerCase().includes(p.first.toLowerCase()) && !res.body.includes(planted.page.pageId));
        }
      }
    }
    // Another key under the same routing link is served as before; the link's own path too.
    assert.equal((await visit(t, host, `${planted.routing}/someone-else`)).statusCode, 200);
    assert.equal((await visit(t, host, planted.routing)).statusCode, 200);
    // Twice over the same path (the SQLite outcome memo): still 410.
    assert.equal((await visit(t, host, planted.path)).statusCode, 410);
    expectProblem(
      await t.req('POST', `/v0/pages/${planted.page.pageId}/audiences/${planted.audience.audienceId}/restore`, {}),
      409,
      'conflict',
    );
    // A new audience given the same route key takes the path back.
    ok(await t.req('POST', `/v0/pages/${planted.page.pageId}/audiences`, { personRouteKey: planted.routeKey }), 201);
    assert.equal((await visit(t, host, `${planted.routing}/${planted.routeKey}`)).statusCode, 200);
    // An audience archived by hand (no erasure) is served as before: its page without it.
    const plain = ok(await t.req('POST', `/v0/pages/${planted.page.pageId}/audiences`, {}), 201);
    const plainPath = `/plain-${p.tag}`;
    await link(t, plainPath, { targetType: 'audience', audienceId: plain.audienceId });
    ok(await t.req('POST', `/v0/pages/${planted.page.pageId}/audiences/${plain.audienceId}/archive`, {}));
    assert.equal((await visit(t, host, plainPath)).statusCode, 200);
  });

  test('erasure on PostgreSQL: an upper-case email in form.submitted is redacted', async () => {
    const p = probe();
    const person = ok(await t.req('POST', '/v0/persons', { name: p.name, email: p.email }), 201);
    // A lead on a page made for nobody: only the email the visitor typed (in capitals) ties it to them.
    const page = ok(
      await t.req('POST', '/v0/pages', {
        name: `Lead page ${p.tag}`,
        title: 'Leads',
        pageContext: 'ctx',
        pageType: 'inbound',
        status: 'published',
        actions: [FORM_ACTION],
      }),
      201,
    );
    const audience = ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, {}), 201);
    const path = `/lead-${p.tag}`;
    await link(t, path, { targetType: 'audience', audienceId: audience.audienceId });
    const html = String((await visit(t, host, path)).body);
    const hidden = (name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html)?.[1] ?? '';
    const posted = await visit(t, host, '/_pam/forms', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        token: hidden('token'),
        action: hidden('action'),
        path: hidden('path'),
        name: 'A visitor',
        email: p.email.toUpperCase(),
        phone: '',
      }).toString(),
    });
    assert.equal(posted.statusCode, 303, posted.body);
    const leads = async () =>
      (ok(await t.req('GET', '/v0/events?type=form.submitted&limit=100')).items as Json[]).filter(
        (e) => !e.payload.redacted && e.payload.data.audienceId === audience.audienceId,
      );
    const [event, more] = await leads();
    assert.ok(event && !more, 'one lead');
    assert.equal(event.payload.data.email, p.email.toUpperCase(), 'the form kept the case the visitor typed');
    await erase(person.personId);
    assert.deepEqual(await leads(), []);
    assert.deepEqual(ok(await t.req('GET', `/v0/events/${event.eventId}`)).payload, { redacted: true, personId: person.personId });
    const [session] = ok(await t.req('GET', `/v0/pages/${page.pageId}/audience_sessions`)).items as Json[];
    assert.equal(session.formSubmissionEmail, '');
    // The page made for nobody is served as before.
    assert.equal((await visit(t, host, path)).statusCode, 200);
  });

  test('a visit elsewhere that mentions them loses that value, and its rollup row moves with it', async () => {
    const p = probe();
    const planted = await plant(p);
    const utm = async () =>
      (
        ok(
          await t.req(
            'GET',
            `/v0/pages/${planted.other.pageId}/analytics?groupBy=utmCampaign&startDate=2026-11-20T00:00:00Z&endDate=2026-11-21T00:00:00Z`,
          ),
        ).groups as Json[]
      ).map((g) => [g.key, g.visits]);
    const before = await utm();
    await erase(planted.person.personId);
    const sessions = ok(await t.req('GET', `/v0/pages/${planted.other.pageId}/audience_sessions?limit=100`)).items as Json[];
    assert.equal(sessions.length, 1);
    assert.equal(sessions[0].utmCampaign, '');
    assert.equal(sessions[0].totalClicksCount, 3, 'the counts stay');
    const afterwards = await utm();
    assert.notDeepEqual(afterwards, before);
    assert.ok(!JSON.stringify(afterwards).toLowerCase().includes(p.first.toLowerCase()));
  });
});

describe('the matcher: anywhere inside a string, ignoring case, the same on both databases', () => {
  /** An account whose log holds `text`: its `account_log.created` event mentions whatever `text` holds. */
  async function accountEvent(text: string): Promise<void> {
    const account = ok(await t.req('POST', '/v0/accounts', { name: 'Acct', domain: `d${Date.now()}${Math.random()}.example` }), 201);
    ok(await t.req('POST', `/v0/accounts/${account.accountId}/logs`, { source: 'crm', type: 'note', payload: { text } }), 201);
  }
  const redactedLogs = async (personId: string) =>
    (ok(await t.req('GET', '/v0/events?type=account_log.created&limit=100')).items as Json[]).map((e) => ({
      redacted: e.payload.redacted === true && e.payload.personId === personId,
      text: e.payload.data?.payload?.text as string | undefined,
      id: e.eventId,
    }));

  test('inside free text, in another case, with its wildcards and a Kelvin sign: redacted; others kept', async () => {
    const name = `Kim 100%_${Date.now()}`;
    const person = ok(await t.req('POST', '/v0/persons', { name }), 201);
    const texts = {
      greeting: `Hello ${name.toUpperCase()}, welcome`,
      kelvin: `note: \u212A${name.slice(1)}!`,
      wildcard: `Kim 100x_${name.slice(9)}`,
      other: 'Hello somebody else',
    };
    for (const text of Object.values(texts)) await accountEvent(text);
    await erase(person.personId);
    const logs = await redactedLogs(person.personId);
    const kept = logs.filter((l) => !l.redacted).map((l) => l.text);
    assert.ok(kept.includes(texts.other) && kept.includes(texts.wildcard), 'no wildcard matches, unrelated text stays');
    assert.ok(!kept.includes(texts.greeting) && !kept.includes(texts.kelvin));
    assert.equal(logs.filter((l) => l.redacted).length, 2);
  });

  test('a name of 3 characters counts anywhere; of 2, only as a whole value', async () => {
    const three = ok(await t.req('POST', '/v0/persons', { name: 'Qzx' }), 201);
    const two = ok(await t.req('POST', '/v0/persons', { name: 'Qy' }), 201);
    await accountEvent('QZXylophone');
    await accountEvent('Qyrgyz');
    await accountEvent('qy');
    await erase(three.personId);
    await erase(two.personId);
    const events = ok(await t.req('GET', '/v0/events?type=account_log.created&limit=100')).items as Json[];
    const texts = events.filter((e) => !e.payload.redacted).map((e) => e.payload.data.payload.text);
    assert.ok(!texts.includes('QZXylophone'), '3 characters: found inside a word');
    assert.ok(texts.includes('Qyrgyz'), '2 characters: not inside a word');
    assert.ok(!texts.includes('qy'), '2 characters: a whole value, in another case');
  });
});
