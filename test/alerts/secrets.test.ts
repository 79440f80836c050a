import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { migrations } from '../../src/db/migrations/index.js';
import { expectProblem, freshDatabase, type Json, ok, startApp, type TestApp } from '../helpers.js';
import { postLead } from '../integrations/helpers.js';
import { until } from '../until.js';
import { slack } from './slack.js';

// Issue 45 §6: a Slack webhook URL is a secret (stored sealed, shown masked), what a visitor typed
// is inert in Slack's text, an alert's lastError holds no DNS answer, and a test message goes at
// most once a minute per alert.

let t: TestApp;
let hooks: Awaited<ReturnType<typeof slack>>;
before(async () => {
  hooks = await slack();
  t = await startApp({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true', COLLECT_RATE_PER_MINUTE: '1000' });
});
after(async () => {
  await t.close();
  await hooks.close();
});

const TOKEN = 'AbCdEfGhIjKlMnOpQrStUvWx';
const SLACK_URL = `https://hooks.slack.com/services/T0123ABCD/B0456EFGH/${TOKEN}`;
const create = (url: string, name = 'Secret', event = 'visit.started') =>
  t.req('POST', '/v0/alerts', { name, channel: { type: 'slack', webhookUrl: url }, when: { event } });

describe('the webhook URL is a secret', () => {
  test('stored sealed, never returned: every answer shows https://hooks.slack.com/services/T…/…/ and the last 4 characters', async () => {
    const created = ok(await create(SLACK_URL), 201);
    const masked = 'https://hooks.slack.com/services/T…/…/UvWx';
    assert.equal(created.channel.webhookUrl, masked);
    const got = ok(await t.req('GET', `/v0/alerts/${created.alertId}`));
    assert.equal(got.channel.webhookUrl, masked);
    const listed = ok(await t.req('GET', '/v0/alerts?limit=100'));
    for (const text of [JSON.stringify(created), JSON.stringify(got), JSON.stringify(listed)]) {
      assert.ok(!text.includes(TOKEN.slice(0, -4)) && !text.includes('T0123ABCD') && !text.includes('B0456EFGH'), text);
    }
    // Nothing of it in the clear in the database either.
    const row = await t.app.db.selectFrom('alerts').selectAll().where('id', '=', created.alertId).executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(row).includes(TOKEN.slice(0, -4)), JSON.stringify(row));
    assert.equal(row.webhook_url, '');

    // Sent back as read (the masked form), nothing changes; a new URL is sealed and masked anew.
    const same = ok(await t.req('PATCH', `/v0/alerts/${created.alertId}`, got));
    assert.equal(same.updatedAt, got.updatedAt);
    const moved = ok(
      await t.req('PATCH', `/v0/alerts/${created.alertId}`, {
        channel: { type: 'slack', webhookUrl: 'https://hooks.slack.com/services/T9/B9/zyxwvutsrqponm9876' },
      }),
    );
    assert.equal(moved.channel.webhookUrl, 'https://hooks.slack.com/services/T…/…/9876');
  });

  test('messages are sent to the sealed URL; a test message at most once a minute per alert (429 with Retry-After)', async () => {
    const alert = ok(await create(hooks.url('onceaminute'), 'Once a minute'), 201);
    assert.equal(alert.channel.webhookUrl.endsWith('/services/T…/…/nute'), true, alert.channel.webhookUrl);
    ok(await t.req('POST', `/v0/alerts/${alert.alertId}/test`, {}), 202);
    await until('the test message', () => hooks.received.find((r) => r.path.endsWith('/onceaminute')), 10_000);

    const again = await t.req('POST', `/v0/alerts/${alert.alertId}/test`, {});
    expectProblem(again, 429, 'rate_limited');
    const wait = Number(again.headers['retry-after']);
    assert.ok(wait >= 1 && wait <= 60, String(again.headers['retry-after']));
    // Another alert has its own minute.
    const other = ok(await create(hooks.url('another'), 'Another'), 201);
    ok(await t.req('POST', `/v0/alerts/${other.alertId}/test`, {}), 202);

    // Just inside the minute: still refused; just past it: sent.
    const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
    await t.app.db
      .updateTable('alerts')
      .set({ test_sent_at: ago(58_000) })
      .where('id', '=', alert.alertId)
      .execute();
    const inside = await t.req('POST', `/v0/alerts/${alert.alertId}/test`, {});
    expectProblem(inside, 429, 'rate_limited');
    assert.ok(Number(inside.headers['retry-after']) <= 2, String(inside.headers['retry-after']));
    await t.app.db
      .updateTable('alerts')
      .set({ test_sent_at: ago(60_500) })
      .where('id', '=', alert.alertId)
      .execute();
    ok(await t.req('POST', `/v0/alerts/${alert.alertId}/test`, {}), 202);
    await until('the second test message', () => hooks.received.filter((r) => r.path.endsWith('/onceaminute'))[1], 10_000);
    assert.equal(hooks.received.filter((r) => r.path.endsWith('/onceaminute')).length, 2);
  });
});

describe("Slack's text", () => {
  test('a typed name and company are never a link, a mention or bold: mrkdwn with verbatim, escaped, URLs defanged', async () => {
    ok(await create(hooks.url('typed'), 'Typed *values*', 'form.submitted'), 201);
    const typed = '*Evil* https://evil.example/login <@U0123> <!channel> visit evil.com';
    await postLead(t, { name: typed, email: `typed@typed-${Date.now()}.example` });
    const got = await until('the lead message', () => hooks.received.find((r) => r.path.endsWith('/typed')), 10_000);
    const all = JSON.stringify(got.body);
    for (const raw of ['*Evil*', 'https://evil.example', 'evil.com', '<@U0123>', '<!channel>', '<https://evil']) {
      assert.ok(!all.includes(raw), `${raw} in ${all}`);
    }
    assert.match(got.body.text, /Evil.*evil\[\.\]example.*&lt;@U0123&gt; &lt;!channel&gt;.*evil\[\.\]com/);
    const objects: Json[] = got.body.blocks.flatMap((b: Json) => [b.text, ...(b.fields ?? []), ...(b.elements ?? [])]).filter(Boolean);
    const withName = objects.filter((o) => String(o.text).includes('U0123'));
    assert.ok(withName.length >= 2, JSON.stringify(objects));
    for (const o of withName) assert.ok(o.type === 'plain_text' || (o.type === 'mrkdwn' && o.verbatim === true), JSON.stringify(o));
  });
});

describe("an alert's lastError", () => {
  test('says what failed without the addresses a name resolved to', async () => {
    const strict = await startApp(
      { WEBHOOK_RETRY_SCHEDULE: '60' },
      { webhookResolve: async () => [{ address: '10.20.30.40', family: 4 }] },
    );
    try {
      const alert = ok(
        await strict.req('POST', '/v0/alerts', {
          name: 'Inside',
          channel: { type: 'slack', webhookUrl: 'https://hooks.inside.example/services/T1/B1/abcdefgh' },
          when: { event: 'visit.started' },
        }),
        201,
      );
      ok(await strict.req('POST', `/v0/alerts/${alert.alertId}/test`, {}), 202);
      const [message] = await until(
        'the failed attempt',
        async () => {
          const items = ok(await strict.req('GET', `/v0/alerts/${alert.alertId}/messages`)).items as Json[];
          return items[0]?.lastError ? items : undefined;
        },
        10_000,
      );
      assert.ok(!message.lastError.includes('10.20.30.40'), message.lastError);
      assert.match(message.lastError, /hooks\.inside\.example/);
      assert.match(message.lastError, /WEBHOOK_ALLOW_PRIVATE/);
    } finally {
      await strict.close();
    }
  });
});

describe('migration 0046 on alerts stored before it', () => {
  test('a URL stored in the clear is masked by the migration, sealed at the next start, and still sent to', async () => {
    const database = await freshDatabase();
    try {
      const env = { DATABASE_URL: database.url, WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' };
      const old = await startApp(env);
      // Back to before 0046, and an alert as an older version stored it: its URL in the clear.
      const names = Object.keys(migrations).sort();
      const before = names[names.indexOf('2026_12_04_0046_alert_webhook_secrets') - 1] as string;
      assert.equal((await old.migrating((migrator) => migrator.migrateTo(before))).error, undefined);
      const url = hooks.url('storedclear');
      const at = new Date().toISOString();
      await old.app.db
        .insertInto('alerts')
        .values({
          id: 'alert_01jzzzzzzzzzzzzzzzzzzzzzzz',
          tenant_id: old.tenantId,
          name: 'Stored in the clear',
          webhook_url: url,
          event: 'visit.started',
          account_ids: null,
          segment_ids: null,
          page_ids: null,
          active: 1,
          created_at: at,
          updated_at: at,
        } as never)
        .execute();
      await old.close();

      const t2 = await startApp(env);
      try {
        const got = ok(await t2.req('GET', '/v0/alerts/alert_01jzzzzzzzzzzzzzzzzzzzzzzz', undefined, { key: old.key }));
        assert.equal(got.channel.webhookUrl, url.replace(/\/services\/T0001\/B0001\/storedclear$/, '/services/T…/…/lear'));
        const row = await t2.app.db.selectFrom('alerts').selectAll().where('id', '=', got.alertId).executeTakeFirstOrThrow();
        assert.equal(row.webhook_url, '');
        assert.ok(row.webhook_url_sealed?.startsWith('v1.') && !row.webhook_url_sealed.includes('storedclear'));
        ok(await t2.req('POST', `/v0/alerts/${got.alertId}/test`, {}, { key: old.key }), 202);
        await until('the test message to the sealed URL', () => hooks.received.find((r) => r.path.endsWith('/storedclear')), 10_000);
      } finally {
        await t2.close();
      }
    } finally {
      await database.drop();
    }
  });
});
