import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { expectProblem, onPostgres, startApp, type Json, type TestApp, ok } from '../helpers.js';

// DELETE /v0/persons/{person_id}: erasure, checked against a dump of every table.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

/** Every row of every table of the test's database, as text (blobs as latin1, so stored strings show). */
async function dump(): Promise<string> {
  const tables = onPostgres
    ? (
        await sql<{ name: string }>`select table_name as name from information_schema.tables
          where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(t.app.db)
      ).rows
    : (await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(t.app.db)).rows;
  assert.ok(tables.length > 10, 'the dump sees the tables');
  const parts: string[] = [];
  for (const { name } of tables) {
    const rows = (await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(t.app.db)).rows;
    for (const row of rows) {
      for (const value of Object.values(row)) {
        parts.push(
          Buffer.isBuffer(value)
            ? value.toString('latin1')
            : value instanceof Uint8Array
              ? Buffer.from(value).toString('latin1')
              : String(value),
        );
      }
    }
  }
  return parts.join('\n').toLowerCase();
}

/** A person with everything that can hold their data: logs, a linked audience, visits with their form data, events, an idempotent create. */
async function personWithHistory(name: string, email: string, phone: string) {
  const person = ok(
    await t.req(
      'POST',
      '/v0/persons',
      { name, email, phoneNumber: phone, domain: 'erase.example' },
      { headers: { 'idempotency-key': `create-${email}` } },
    ),
    201,
  );
  ok(await t.req('PATCH', `/v0/persons/${person.personId}`, { linkedinProfileUrl: 'https://www.linkedin.com/in/x' }));
  ok(await t.req('POST', `/v0/persons/${person.personId}/logs`, { source: 'crm', type: 'note', payload: { text: `Met ${name}` } }), 201);
  const page = ok(await t.req('POST', '/v0/pages', { name: 'Erasure page', title: 'T', pageContext: 'c', pageType: 'inbound' }), 201);
  const audience = ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, { personId: person.personId, personRouteKey: 'rk' }), 201);
  const session = (formSubmissionEmail: string, formSubmissionPhone: string, formSubmissionIdentifier = name) =>
    t.req('POST', `/v0/pages/${page.pageId}/audience_sessions`, {
      audienceId: audience.audienceId,
      analyticsSessionId: `s-${Math.random()}`,
      pageUrl: 'https://x.example/p',
      sessionStartedAt: '2026-11-20T10:00:00Z',
      sessionEndedAt: '2026-11-20T10:01:00Z',
      totalClicksCount: 4,
      hasFormSubmit: true,
      formSubmissionId: 'form-1',
      formSubmissionIdentifier,
      formSubmissionEmail,
      formSubmissionPhone,
    });
  const byEmail = ok(await session(email.toUpperCase(), ''), 201);
  const byPhone = ok(await session('', phone), 201);
  const stranger = ok(await session('someone@else.example', '+15550000000', 'Someone Else'), 201);
  return { person, page, audience, sessions: { byEmail, byPhone, stranger } };
}

describe('DELETE /v0/persons/{person_id}', () => {
  test('erases the person: nothing of their name, email or phone is left in any table', async () => {
    ok(await t.req('POST', '/v0/webhook_subscriptions', { url: 'https://hooks.example.com/pam', events: ['*'] }), 201);
    const name = 'Zelda Quintessa';
    const email = 'zelda.quintessa@erase.example';
    const phone = '+14155550199';
    const { person, page, audience, sessions } = await personWithHistory(name, email, phone);
    const before = await dump();
    assert.ok(before.includes(name.toLowerCase()) && before.includes(email) && before.includes(phone), 'the dump finds them before');

    const res = await t.req('DELETE', `/v0/persons/${person.personId}`);
    assert.equal(res.status, 204, res.text);
    assert.equal(res.text, '');

    const afterwards = await dump();
    for (const value of [name, email, phone, 'zelda']) {
      const i = afterwards.indexOf(value.toLowerCase());
      assert.ok(i === -1, `no trace of ${value}: ${afterwards.slice(Math.max(0, i - 300), i + 100)}`);
    }

    expectProblem(await t.req('GET', `/v0/persons/${person.personId}`), 404, 'not_found');
    expectProblem(await t.req('DELETE', `/v0/persons/${person.personId}`), 404, 'not_found');
    expectProblem(await t.req('GET', `/v0/persons/${person.personId}/logs/personlog_01h0000000000000000000000a`), 404, 'not_found');

    const a = ok(await t.req('GET', `/v0/pages/${page.pageId}/audiences/${audience.audienceId}`));
    assert.equal(a.personId, null);
    assert.match(a.computedName, /^Audience \d+$/);
    assert.equal(a.effectiveName, a.computedName);

    const visits = ok(await t.req('GET', `/v0/pages/${page.pageId}/audience_sessions?limit=100`)).items as Json[];
    const byId = new Map(visits.map((v) => [v.audienceSessionId, v]));
    for (const s of [sessions.byEmail, sessions.byPhone]) {
      const v = byId.get(s.audienceSessionId);
      assert.equal(v.formSubmissionEmail, '');
      assert.equal(v.formSubmissionPhone, '');
      assert.equal(v.formSubmissionIdentifier, '');
      assert.equal(v.totalClicksCount, 4, 'the counts stay for analytics');
      assert.equal(v.hasFormSubmit, true);
    }
    assert.equal(byId.get(sessions.stranger.audienceSessionId).formSubmissionEmail, 'someone@else.example', "others' visits are untouched");

    const events = ok(await t.req('GET', '/v0/events?limit=100')).items as Json[];
    const deleted = events.filter((e) => e.type === 'person.deleted');
    assert.equal(deleted.length, 1);
    assert.deepEqual(deleted[0].payload.data, { personId: person.personId });
    const redacted = events.filter((e) => e.payload.redacted === true);
    assert.ok(redacted.length >= 5, 'person.created, person.updated, person_log.created, audience.created, sessions');
    for (const e of redacted) assert.deepEqual(e.payload, { redacted: true, personId: person.personId });

    // A retried create with the same key no longer replays the erased person.
    const again = await t.req(
      'POST',
      '/v0/persons',
      { name: 'Someone', email: 'x@y.example' },
      { headers: { 'idempotency-key': `create-${email}` } },
    );
    assert.equal(again.headers['idempotent-replayed'], undefined);
  });

  test('other persons, and another tenant, are untouched; another tenant gets 404', async () => {
    const keep = ok(await t.req('POST', '/v0/persons', { name: 'Kept Person', email: 'kept@example.com' }), 201);
    const gone = ok(await t.req('POST', '/v0/persons', { name: 'Gone Person', email: 'gone@example.com' }), 201);
    const other = await t.newTenant('Other');
    expectProblem(await t.req('DELETE', `/v0/persons/${gone.personId}`, undefined, { key: other.key }), 404, 'not_found');
    const total = ok(await t.req('GET', '/v0/persons')).totalCount;
    assert.equal((await t.req('DELETE', `/v0/persons/${gone.personId}`)).status, 204);
    assert.deepEqual(ok(await t.req('GET', `/v0/persons/${keep.personId}`)), keep);
    assert.equal(ok(await t.req('GET', '/v0/persons')).totalCount, total - 1);
    const again = ok(await t.req('POST', '/v0/persons', { name: 'Gone Person' }), 201);
    assert.equal(again.slug, 'gone-person', 'the slug is free again');
  });

  test('unknown ids and bodies: 404, and no query parameters', async () => {
    expectProblem(await t.req('DELETE', '/v0/persons/person_01h0000000000000000000000a'), 404, 'not_found');
    expectProblem(await t.req('DELETE', '/v0/persons/person_01h0000000000000000000000a?force=1'), 400, 'validation_failed', ['/force']);
  });

  test('the CLI erases too: persons erase <personId>', { skip: onPostgres && 'the CLI test runs on SQLite' }, async () => {
    const person = ok(await t.req('POST', '/v0/persons', { name: 'Cli Erased', email: 'cli@erase.example' }), 201);
    // The CLI opens the same database file as the app under test.
    const db = t.app.config.database;
    const file = db.kind === 'sqlite' ? db.path : '';
    assert.ok(file, 'the test database is a SQLite file');
    const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'persons', 'erase', person.personId], {
        env: { ...process.env, DATABASE_URL: file, LOG_LEVEL: 'warn' },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(JSON.parse(out.stdout), { personId: person.personId, erased: true });
    expectProblem(await t.req('GET', `/v0/persons/${person.personId}`), 404, 'not_found');
  });
});
