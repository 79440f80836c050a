import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { newDelivery } from '../../src/webhooks/deliveries.js';
import { newId } from '../../src/ids.js';
import { startApp, type TestApp } from '../helpers.js';

// Housekeeping (jobs/maintenance.ts, its tasks in housekeeping.ts) runs in every process, whatever WEBHOOK_DISPATCHER says: an
// API-only instance prunes expired idempotency keys and old events too.

const DAY_MS = 24 * 60 * 60 * 1000;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

let t: TestApp;
before(async () => {
  t = await startApp({ WEBHOOK_DISPATCHER: 'false' }, { maintenanceEveryMs: 100 });
});
after(async () => {
  await t.close();
});

async function until(check: () => Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('with WEBHOOK_DISPATCHER=false, expired idempotency keys are pruned; live and permanent ones stay', async () => {
  const key = (name: string, expires: string | null) => ({
    tenant_id: t.tenantId,
    scope: 'test',
    key: name,
    request_hash: 'x',
    response_status: 201,
    response_body: '{}',
    created_at: ago(2 * DAY_MS),
    expires_at: expires,
  });
  await t.app.db
    .insertInto('idempotency_keys')
    .values([key('expired', ago(1000)), key('live', ago(-DAY_MS)), key('permanent', null)])
    .execute();
  const keys = async () =>
    (await t.app.db.selectFrom('idempotency_keys').select('key').where('scope', '=', 'test').orderBy('key').execute()).map((k) => k.key);
  await until(async () => !(await keys()).includes('expired'), 'the expired key is pruned');
  assert.deepEqual(await keys(), ['live', 'permanent']);
});

test('with WEBHOOK_DISPATCHER=false, events older than 30 days go with their deliveries; newer ones stay', async () => {
  const subscription = await t.req('POST', '/v0/webhook_subscriptions', { url: 'https://example.com/hook', events: ['*'] });
  assert.equal(subscription.status, 201);
  const event = (createdAt: string) => ({
    id: newId('event'),
    tenant_id: t.tenantId,
    type: 'person.created',
    payload: '{}',
    created_at: createdAt,
    fanned_out: 1,
    fan_lease_until: null,
  });
  const old = event(ago(31 * DAY_MS));
  const recent = event(ago(29 * DAY_MS));
  const deliveries = [old, recent].map((e) => newDelivery(t.tenantId, subscription.body.subscriptionId, e.id, e.type, e.created_at));
  // Together: a round may run between two statements and prune the old event before its delivery exists.
  await t.app.db.transaction().execute(async (trx) => {
    await trx.insertInto('events').values([old, recent]).execute();
    await trx.insertInto('webhook_deliveries').values(deliveries).execute();
  });
  const exists = async (table: 'events' | 'webhook_deliveries', id: string) =>
    Boolean(await t.app.db.selectFrom(table).select('id').where('id', '=', id).executeTakeFirst());
  await until(async () => !(await exists('events', old.id)), 'the old event is pruned');
  assert.equal(await exists('webhook_deliveries', deliveries[0]?.id ?? ''), false, 'its delivery went with it');
  assert.equal(await exists('events', recent.id), true);
  assert.equal(await exists('webhook_deliveries', deliveries[1]?.id ?? ''), true);
});

test('lead form claims past their window are pruned; recent ones stay', async () => {
  const old = { visit_id: `visit_old_${Date.now()}`, accepted_at: ago(61_000) };
  const recent = { visit_id: `visit_recent_${Date.now()}`, accepted_at: ago(5_000) };
  await t.app.db.insertInto('form_claims').values([old, recent]).execute();
  const ids = async () => (await t.app.db.selectFrom('form_claims').select('visit_id').execute()).map((r) => r.visit_id);
  await until(async () => !(await ids()).includes(old.visit_id), 'the old claim is pruned');
  assert.ok((await ids()).includes(recent.visit_id));
});

test('housekeeping never keeps the process alive; a round runs at start, every task tried though all fail', () => {
  // A process whose only work is housekeeping (an hour apart) exits after its first round. Its
  // database has no tables, so each task fails: each is logged, none holds back the next.
  const script = `
    const { Kysely, SqliteDialect } = await import('kysely');
    const { default: Sqlite } = await import('better-sqlite3');
    const { createMaintenance } = await import('./src/jobs/maintenance.ts');
    const { HOUSEKEEPING } = await import('./src/housekeeping.ts');
    const db = new Kysely({ dialect: new SqliteDialect({ database: new Sqlite(':memory:') }) });
    const failed = [];
    createMaintenance(db, { error: (fields) => failed.push(fields.task) }, HOUSEKEEPING).start();
    process.on('exit', () => console.log(JSON.stringify(failed)));
  `;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(run.signal, null, 'it exited by itself, not killed at the timeout');
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout), [
    'prune events',
    'prune idempotency keys',
    'prune form claims',
    'forget past daily secrets',
    'prune experience views',
  ]);
});
