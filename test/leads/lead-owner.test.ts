import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { validatorCompiler } from '../../src/http/validation.js';
import { FormSubmittedData } from '../../src/leads/schemas.js';
import { migrations } from '../../src/db/migrations/index.js';
import { ok, startApp, type Json, type TestApp } from '../helpers.js';
import { fallbackHost } from '../site/serve-helpers.js';
import { formPage, formPoster } from './lead-forms.js';

// Issue 36, part 2: a lead belongs to who filled the form, and a visitor's form never changes an
// existing person. Through served pages and form posts on the tenant's domain, on both databases.

let t: TestApp;
let submit: ReturnType<typeof formPoster>;
before(async () => {
  t = await startApp();
  submit = formPoster(t, await fallbackHost(t), '192.0', 2);
});
after(async () => {
  await t.close();
});

let n = 0;
const fresh = (name: string) => `${name}-${++n}-${Date.now().toString(36)}`;

/** A person made through the API (what sales typed in), read back whole. */
async function person(fields: Record<string, unknown>): Promise<Json> {
  return ok(await t.req('POST', '/v0/persons', fields), 201);
}

/** A published page with a lead form, served at a fresh path for an audience made for `personId`. */
const linkOf = (personId: string | undefined) => formPage(t, personId ? { personId } : {}, 'via');

const events = async (type: string) => ok(await t.req('GET', `/v0/events?type=${type}&limit=100`)).items as Json[];
const leadsOf = async (pageId: string) => ok(await t.req('GET', `/v0/leads?pageId=${pageId}`)).items as Json[];
const logsOf = async (personId: string) => ok(await t.req('GET', `/v0/persons/${personId}/logs`)).items as Json[];
const updatesOf = async (personId: string) => (await events('person.updated')).filter((e) => e.payload.data.personId === personId);
const submittedOn = async (pageId: string) => (await events('form.submitted')).filter((e) => e.payload.data.pageId === pageId);

describe('a lead belongs to who filled the form', () => {
  test("Bob on Jane's forwarded link (Jane has an email): a new person Bob, viaPersonId Jane, Jane unchanged", async () => {
    const jane = await person({ name: 'Jane Roe', email: `${fresh('jane')}@acme.example` });
    const { page, audience, path } = await linkOf(jane.personId);
    const bobEmail = `${fresh('bob')}@globex.example`;
    assert.equal((await submit(path, { name: 'Bob Smith', email: bobEmail, phone: '+14155550199' })).statusCode, 303);

    const [lead] = await leadsOf(page.pageId);
    assert.notEqual(lead.personId, jane.personId, "the lead is not Jane's");
    assert.equal(lead.viaPersonId, jane.personId);
    assert.deepEqual(
      [lead.personName, lead.personEmail, lead.personPhoneNumber],
      ['Bob Smith', bobEmail, '+14155550199'],
      'the Leads view shows who filled the form',
    );
    assert.deepEqual([lead.submittedName, lead.submittedEmail, lead.submittedPhone], ['Bob Smith', bobEmail, '+14155550199']);
    const bob = ok(await t.req('GET', `/v0/persons/${lead.personId}`));
    assert.deepEqual([bob.name, bob.email, bob.phoneNumber, bob.domain], ['Bob Smith', bobEmail, '+14155550199', 'globex.example']);

    assert.deepEqual(ok(await t.req('GET', `/v0/persons/${jane.personId}`)), jane, 'Jane is unchanged');
    assert.deepEqual(await updatesOf(jane.personId), []);
    assert.deepEqual(await logsOf(jane.personId), [], "the lead is not in Jane's log");

    // The session stays on the audience that was served (Jane's), and the event names both.
    const [session] = ok(await t.req('GET', `/v0/pages/${page.pageId}/audience_sessions`)).items as Json[];
    assert.equal(session.audienceId, audience.audienceId);
    assert.equal(session.formSubmissionEmail, bobEmail);
    const [submitted] = await submittedOn(page.pageId);
    assert.equal(submitted.payload.data.personId, bob.personId);
    assert.equal(submitted.payload.data.viaPersonId, jane.personId);
    assert.equal(submitted.payload.data.audienceId, audience.audienceId);
    assert.equal(submitted.payload.data.audienceSessionId, session.audienceSessionId);
    assert.equal(submitted.payload.data.email, bobEmail);
    const holds = validatorCompiler({ schema: FormSubmittedData, httpPart: 'body', method: 'POST', url: '/' }) as (d: unknown) => boolean;
    assert.equal(holds(submitted.payload.data), true, 'the event holds to its schema');

    const [log] = await logsOf(bob.personId);
    assert.equal(log.type, 'form-submitted');
    assert.deepEqual(
      { ...log.payload },
      {
        pageId: page.pageId,
        audienceId: audience.audienceId,
        actionId: page.actions[0].actionId,
        formSubmissionId: lead.leadId,
        name: 'Bob Smith',
        email: bobEmail,
        phone: '+14155550199',
        verified: false,
        matchedBy: 'new',
        viaPersonId: jane.personId,
      },
    );

    const csv = await t.req('GET', `/v0/leads?pageId=${page.pageId}`, undefined, { headers: { accept: 'text/csv' } });
    const [header, row] = csv.text.trim().split('\r\n');
    const cells = Object.fromEntries((header ?? '').split(',').map((h, i) => [h, (row ?? '').split(',')[i]]));
    assert.deepEqual(
      [cells.personId, cells.personName, cells.viaPersonId, cells.submittedName, cells.submittedEmail, cells.submittedPhone],
      [bob.personId, 'Bob Smith', jane.personId, 'Bob Smith', bobEmail, "'+14155550199"],
    );
  });

  test('an anonymous lead writes into an existing person: the email in another case finds them, and changes nothing (an empty phone stays empty)', async () => {
    const ceo = await person({ name: 'Carol Exec', email: `${fresh('ceo')}@initech.example` });
    const jane = await person({ name: 'Jane Roe', email: `${fresh('jane')}@acme.example` });
    const anonymous = await linkOf(undefined);
    const forwarded = await linkOf(jane.personId);
    const typed = ceo.email.toUpperCase();
    assert.equal((await submit(anonymous.path, { name: 'Mallory', email: typed, phone: '+14155550111' })).statusCode, 303);
    assert.equal((await submit(forwarded.path, { name: 'Not Carol', email: ` ${ceo.email} `, phone: '+14155550112' })).statusCode, 303);

    assert.deepEqual(ok(await t.req('GET', `/v0/persons/${ceo.personId}`)), ceo, 'name, email, phone and domain unchanged');
    assert.deepEqual(ok(await t.req('GET', `/v0/persons/${jane.personId}`)), jane);
    assert.deepEqual(await updatesOf(ceo.personId), []);
    assert.equal((await events('person.created')).filter((e) => String(e.payload.data.email).toLowerCase() === ceo.email).length, 1);

    const [first] = await leadsOf(anonymous.page.pageId);
    assert.deepEqual(
      [first.personId, first.viaPersonId, first.personName, first.personPhoneNumber],
      [ceo.personId, null, 'Carol Exec', null],
    );
    assert.deepEqual([first.submittedName, first.submittedEmail, first.submittedPhone], ['Mallory', typed, '+14155550111']);
    const [second] = await leadsOf(forwarded.page.pageId);
    assert.deepEqual([second.personId, second.viaPersonId], [ceo.personId, jane.personId]);
    assert.deepEqual([second.submittedName, second.submittedEmail], ['Not Carol', ceo.email]);

    // The log keeps what was claimed, marked unverified.
    const logs = (await logsOf(ceo.personId)).map((l) => l.payload);
    assert.deepEqual(
      logs.map((p) => [p.name, p.email, p.phone, p.verified, p.matchedBy, p.viaPersonId]),
      [
        ['Not Carol', ceo.email, '+14155550112', false, 'email', jane.personId],
        ['Mallory', typed, '+14155550111', false, 'email', null],
      ],
    );
    const [viaEvent] = await submittedOn(forwarded.page.pageId);
    assert.deepEqual([viaEvent.payload.data.personId, viaEvent.payload.data.viaPersonId], [ceo.personId, jane.personId]);
  });

  test("the link's person with no email yet is the lead's person, and stays unchanged (their empty email and phone stay empty)", async () => {
    const jane = await person({ name: 'Jane Roe' });
    const { page, audience, path } = await linkOf(jane.personId);
    const email = `${fresh('jane')}@acme.example`;
    assert.equal((await submit(path, { name: 'Jane R.', email, phone: '+442071234567' })).statusCode, 303);
    const [lead] = await leadsOf(page.pageId);
    assert.deepEqual(
      [lead.personId, lead.viaPersonId, lead.personName, lead.personEmail, lead.personPhoneNumber],
      [jane.personId, null, 'Jane Roe', null, null],
    );
    assert.deepEqual([lead.submittedName, lead.submittedEmail, lead.submittedPhone], ['Jane R.', email, '+442071234567']);
    assert.deepEqual(ok(await t.req('GET', `/v0/persons/${jane.personId}`)), jane);
    assert.deepEqual(await updatesOf(jane.personId), []);
    assert.equal((await events('person.created')).filter((e) => e.payload.data.email === email).length, 0, 'no one is made');
    const [submitted] = await submittedOn(page.pageId);
    assert.deepEqual(
      [submitted.payload.data.personId, submitted.payload.data.viaPersonId, submitted.payload.data.audienceId],
      [jane.personId, null, audience.audienceId],
    );
    const [log] = await logsOf(jane.personId);
    assert.deepEqual(
      [log.payload.email, log.payload.verified, log.payload.matchedBy, log.payload.viaPersonId],
      [email, false, 'link', null],
    );

    // An email that is someone else's still finds that someone, even on this link.
    const other = await person({ name: 'Olga Other', email: `${fresh('olga')}@acme.example` });
    assert.equal((await submit(path, { name: 'Olga', email: other.email.toUpperCase() })).statusCode, 303);
    const [newest] = await leadsOf(page.pageId);
    assert.deepEqual([newest.personId, newest.viaPersonId], [other.personId, jane.personId]);
    assert.deepEqual(ok(await t.req('GET', `/v0/persons/${other.personId}`)), other);
  });

  test("the link's person typing their own email in another case: theirs, no viaPersonId, unchanged", async () => {
    const jane = await person({ name: 'Jane Roe', email: `${fresh('jane')}@Acme.example` });
    const { page, path } = await linkOf(jane.personId);
    assert.equal((await submit(path, { name: 'J', email: jane.email.toUpperCase(), phone: '+14155550100' })).statusCode, 303);
    const [lead] = await leadsOf(page.pageId);
    assert.deepEqual(
      [lead.personId, lead.viaPersonId, lead.personPhoneNumber, lead.submittedPhone],
      [jane.personId, null, null, '+14155550100'],
    );
    assert.deepEqual(ok(await t.req('GET', `/v0/persons/${jane.personId}`)), jane);
    const [submitted] = await submittedOn(page.pageId);
    assert.equal(submitted.payload.data.viaPersonId, null);
  });

  test('hostile values: kept as typed on the lead, defused in the CSV, never on an existing person; bounds hold', async () => {
    const jane = await person({ name: 'Jane Roe', email: `${fresh('jane')}@acme.example` });
    const { page, path } = await linkOf(jane.personId);
    const hostile = '<img src=x onerror=alert(1)>"\'&ü';
    assert.equal((await submit(path, { name: hostile, email: jane.email, phone: '' })).statusCode, 303);
    const formula = '=HYPERLINK("http://evil")';
    const longest = 'x'.repeat(255);
    assert.equal((await submit(path, { name: formula, email: `${fresh('f')}@evil.example` })).statusCode, 303);
    assert.equal((await submit(path, { name: longest, email: `${fresh('l')}@evil.example` })).statusCode, 303);
    // Just outside the bounds, and a NUL: refused, nothing written.
    const before = (await leadsOf(page.pageId)).length;
    const refused: Record<string, string>[] = [
      { name: 'x'.repeat(256), email: `${fresh('long')}@evil.example` },
      { name: 'nul\u0000', email: `${fresh('nul')}@evil.example` },
      { name: 'Eve', email: 'not-an-email' },
      { name: 'Eve', email: `${fresh('e')}@evil.example`, phone: '+0123' },
    ];
    for (const fields of refused) {
      assert.equal((await submit(path, fields)).statusCode, 400, JSON.stringify(fields).slice(0, 40));
    }
    const leads = await leadsOf(page.pageId);
    assert.equal(leads.length, before);
    const byName = new Map(leads.map((l) => [l.submittedName, l]));
    assert.equal(byName.get(hostile)?.personId, jane.personId, 'her own email: hers');
    assert.deepEqual(ok(await t.req('GET', `/v0/persons/${jane.personId}`)), jane, 'a hostile name does not rename her');
    assert.equal(byName.get(formula)?.viaPersonId, jane.personId);
    assert.equal(byName.get(longest)?.submittedName.length, 255);

    const csv = await t.req('GET', `/v0/leads?pageId=${page.pageId}`, undefined, { headers: { accept: 'text/csv' } });
    assert.match(csv.text, /"'=HYPERLINK\(""http:\/\/evil""\)"/, 'a formula is defused in the submitted name too');
  });

  test("erasure: erasing the link's person keeps others' leads without them; erasing who was typed blanks what was typed", async () => {
    const jane = await person({ name: 'Jane Roe', email: `${fresh('jane')}@acme.example` });
    const { page, path } = await linkOf(jane.personId);
    const bobEmail = `${fresh('bob')}@globex.example`;
    assert.equal((await submit(path, { name: 'Bob Smith', email: bobEmail })).statusCode, 303);
    const quiet = await person({ name: 'Quinn Quiet' });
    const quietLink = await linkOf(quiet.personId);
    const zedEmail = `${fresh('zed')}@zeta.example`;
    assert.equal((await submit(quietLink.path, { name: 'Zed Zeta', email: zedEmail, phone: '+14155550177' })).statusCode, 303);

    assert.equal((await t.req('DELETE', `/v0/persons/${jane.personId}`)).status, 204);
    const [bobs] = await leadsOf(page.pageId);
    assert.equal(bobs.viaPersonId, null, 'the erased person is named nowhere');
    assert.equal(bobs.submittedEmail, bobEmail);

    // Zed typed on Quinn's link (no email yet): the lead is Quinn's; Zed, later a person, is erased.
    const zed = await person({ name: 'Zed Zeta', email: zedEmail });
    assert.equal((await t.req('DELETE', `/v0/persons/${zed.personId}`)).status, 204);
    const [quinns] = await leadsOf(quietLink.page.pageId);
    assert.deepEqual([quinns.personId, quinns.submittedName, quinns.submittedEmail, quinns.submittedPhone], [quiet.personId, '', '', '']);
    const [entry] = await logsOf(quiet.personId);
    assert.deepEqual([entry.type, entry.payload.name, entry.payload.email, entry.payload.phone], ['form-submitted', '', '', '']);
    assert.equal(entry.payload.formSubmissionId, quinns.leadId, 'the entry itself stays');
  });
});

describe('migration 0031 on existing leads', () => {
  test('rows written before it get what was typed from their log entry, and no viaPersonId', async () => {
    const jane = await person({ name: 'Jane Roe' });
    const { page, path } = await linkOf(jane.personId);
    const email = `${fresh('typed')}@acme.example`;
    assert.equal((await submit(path, { name: 'Typed Name', email, phone: '+14155550142' })).statusCode, 303);
    const anonymous = await linkOf(undefined);
    const other = `${fresh('anon')}@acme.example`;
    assert.equal((await submit(anonymous.path, { name: 'Anon', email: other })).statusCode, 303);

    // Back to before the migration (its columns dropped), then forward: the backfill runs on these rows.
    const names = Object.keys(migrations).sort();
    const before = names[names.indexOf('2026_11_30_0031_lead_submitted') - 1] as string;
    await t.migrating(async (migrator) => {
      const down = await migrator.migrateTo(before);
      assert.equal(down.error, undefined);
      const up = await migrator.migrateToLatest();
      assert.equal(up.error, undefined);
    });

    const [lead] = await leadsOf(page.pageId);
    assert.deepEqual(
      [lead.personId, lead.viaPersonId, lead.submittedName, lead.submittedEmail, lead.submittedPhone],
      [jane.personId, null, 'Typed Name', email, '+14155550142'],
    );
    const [anon] = await leadsOf(anonymous.page.pageId);
    assert.deepEqual([anon.submittedName, anon.submittedEmail, anon.submittedPhone], ['Anon', other, '']);
  });
});
