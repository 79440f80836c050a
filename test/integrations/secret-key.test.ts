import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { sealer } from '../../src/integrations/secrets.js';
import { expectProblem, freshDatabase, ok, onPostgres, startApp, type TestApp, type TestDatabase } from '../helpers.js';
import { fakeCrm, type FakeCrm, type Seen, syncNow } from './helpers.js';

// Issue 45 §6: the key a tenant's secrets (CRM credentials, Slack webhook URLs) are sealed with is
// never kept in the database beside them. Unset INTEGRATIONS_SECRET: on SQLite a file next to the
// database file (secret.key, mode 0600), an older in-database key moved there at start; on
// PostgreSQL, connecting a CRM or an alert is refused with 409 secret_not_configured.

const TOKEN = 'pat-na1-00000000-secret-key-token';
const OLD_KEY = 'an-older-version-kept-this-key-in-the-database-0123';
const alert = {
  name: 'Key',
  channel: { type: 'slack', webhookUrl: 'https://hooks.slack.com/services/T0001/B0001/abcdefgh1234' },
  when: { event: 'visit.started' },
};

let crm: FakeCrm;
before(async () => {
  crm = await fakeCrm();
  crm.handle = (seen: Seen) => {
    assert.equal(seen.headers.authorization, `Bearer ${TOKEN}`);
    if (seen.path === '/crm/v3/properties/contacts') return { body: { results: [{ name: 'email' }] } };
    if (seen.path === '/crm/v3/objects/deals/search') return { body: { total: 0, results: [] } };
    return { body: { status: 'COMPLETE', results: [] } };
  };
});
after(() => crm.close());

describe('PostgreSQL without INTEGRATIONS_SECRET', { skip: !onPostgres }, () => {
  test('connecting a CRM or an alert is 409 secret_not_configured, naming the variable; with it, 201', async () => {
    const t = await startApp({ INTEGRATIONS_SECRET: '', HUBSPOT_API_URL: crm.url });
    try {
      const crmRefused = await t.req('POST', '/v0/integrations', { provider: 'hubspot', accessToken: TOKEN });
      expectProblem(crmRefused, 409, 'secret_not_configured');
      assert.match(crmRefused.body.detail, /INTEGRATIONS_SECRET/);
      const alertRefused = await t.req('POST', '/v0/alerts', alert);
      expectProblem(alertRefused, 409, 'secret_not_configured');
      assert.match(alertRefused.body.detail, /INTEGRATIONS_SECRET/);
      // Nothing was stored, and no key was made and kept in the database.
      assert.equal(ok(await t.req('GET', '/v0/integrations')).items.length, 0);
      assert.equal(ok(await t.req('GET', '/v0/alerts')).items.length, 0);
      const kept = await t.app.db.selectFrom('service_secrets').select('name').where('name', '=', 'integrations_secret').execute();
      assert.deepEqual(kept, []);
      assert.equal(crm.seen.length, 0, 'nothing was sent to the CRM');
    } finally {
      await t.close();
    }
    const configured = await startApp({ HUBSPOT_API_URL: crm.url });
    try {
      ok(await configured.req('POST', '/v0/integrations', { provider: 'hubspot', accessToken: TOKEN }), 201);
      ok(await configured.req('POST', '/v0/alerts', alert), 201);
    } finally {
      await configured.close();
    }
  });
});

describe('SQLite without INTEGRATIONS_SECRET', { skip: onPostgres }, () => {
  let database: TestDatabase;
  let keyFile: string;
  before(async () => {
    database = await freshDatabase();
    keyFile = path.join(path.dirname(database.url), 'secret.key');
  });
  after(() => database.drop());

  test("an older version's key in the database moves to secret.key (0600) at start, and what it sealed still opens", async () => {
    // As an older version left it: the key in service_secrets, a CRM's credentials sealed with it.
    const old = await startApp({ DATABASE_URL: database.url, INTEGRATIONS_SECRET: OLD_KEY, HUBSPOT_API_URL: crm.url });
    const integration = ok(await old.req('POST', '/v0/integrations', { provider: 'hubspot', accessToken: TOKEN }), 201);
    await old.app.db
      .insertInto('service_secrets')
      .values({ name: 'integrations_secret', value: OLD_KEY, created_at: new Date().toISOString() })
      .execute();
    await old.close();
    assert.equal(fs.existsSync(keyFile), false, 'a configured key writes no file');

    const t = await startApp({ DATABASE_URL: database.url, HUBSPOT_API_URL: crm.url, CRM_SYNC_SECONDS: '3600' });
    try {
      assert.equal(fs.readFileSync(keyFile, 'utf8').trim(), OLD_KEY);
      assert.equal(fs.statSync(keyFile).mode & 0o777, 0o600);
      const kept = await t.app.db.selectFrom('service_secrets').select('name').where('name', '=', 'integrations_secret').execute();
      assert.deepEqual(kept, [], 'the database no longer holds the key');
      // The credentials sealed before still open: the sync sends the token (asked as the tenant
      // that connected it: a restarted test app makes a tenant of its own).
      const asBefore: TestApp = { ...t, req: (method, url, body, opts = {}) => t.req(method, url, body, { key: old.key, ...opts }) };
      const synced = await syncNow(asBefore, integration.integrationId);
      assert.equal(synced.lastError, null, JSON.stringify(synced));
      assert.ok(crm.seen.some((s) => s.headers.authorization === `Bearer ${TOKEN}`));
      // A new alert is sealed under the file's key, not stored in the clear.
      const created = ok(await t.req('POST', '/v0/alerts', alert), 201);
      const row = await t.app.db.selectFrom('alerts').selectAll().where('id', '=', created.alertId).executeTakeFirstOrThrow();
      assert.ok(!JSON.stringify(row).includes('abcdefgh1234'), JSON.stringify(row));
      assert.equal(sealer(OLD_KEY).openText(created.alertId, row.webhook_url_sealed ?? ''), alert.channel.webhookUrl);
    } finally {
      await t.close();
    }
  });

  test('a fresh database: a key is generated into secret.key (0600), never into the database, and kept across restarts', async () => {
    const fresh = await freshDatabase();
    const file = path.join(path.dirname(fresh.url), 'secret.key');
    try {
      const first = await startApp({ DATABASE_URL: fresh.url });
      ok(await first.req('POST', '/v0/alerts', alert), 201);
      const rows = await first.app.db.selectFrom('service_secrets').select('name').where('name', '=', 'integrations_secret').execute();
      assert.deepEqual(rows, []);
      await first.close();
      const key = fs.readFileSync(file, 'utf8').trim();
      assert.ok(key.length >= 32);
      assert.equal(fs.statSync(file).mode & 0o777, 0o600);
      const again = await startApp({ DATABASE_URL: fresh.url });
      await again.close();
      assert.equal(fs.readFileSync(file, 'utf8').trim(), key, 'the same key after a restart');
    } finally {
      await fresh.drop();
    }
  });
});

// Two processes starting at once on one database (the bench's service and its metered twin did)
// must both read the key the first one wrote: with `wx` on the file itself, the second could read
// it between its creation and its write, and stop as if it had been emptied.
test('two processes making the key file at once both read the same whole key, every time', { skip: onPostgres }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pam-key-race-'));
  const files = new URL('../../src/assets/files.ts', import.meta.url).href;
  const times = 2000;
  // Both start together once loaded; the first makes each file, the second waits until each
  // appears and asks for it at once, in the window the first may still be writing it.
  const startAt = Date.now() + 4000;
  const script = (waits: boolean) => `
    import fs from 'node:fs';
    import { keyInFile } from ${JSON.stringify(files)};
    const keys = [];
    const pause = new Int32Array(new SharedArrayBuffer(4));
    while (Date.now() < ${startAt} - 5) Atomics.wait(pause, 0, 0, 1);
    while (Date.now() < ${startAt});
    const giveUp = Date.now() + 20000;
    for (let i = 0; i < ${times}; i++) {
      const file = ${JSON.stringify(dir)} + '/key-' + i;
      if (${waits}) while (!fs.existsSync(file) && Date.now() < giveUp);
      keys.push(keyInFile(file, () => 'key-' + i + '-' + process.pid));
    }
    process.stdout.write(JSON.stringify(keys));`;
  const run = (waits: boolean) =>
    promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script(waits)], { maxBuffer: 1 << 22 });
  try {
    const [first, second] = await Promise.all([run(false), run(true)]);
    const a = JSON.parse(first.stdout) as string[];
    const b = JSON.parse(second.stdout) as string[];
    assert.equal(a.length, times);
    assert.deepEqual(b, a, 'both read the key the first wrote');
    assert.deepEqual(fs.readdirSync(dir).sort(), a.map((_, i) => `key-${i}`).sort(), 'no draft is left beside the keys');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
