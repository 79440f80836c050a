import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, ok, startApp, type Json, type TestApp } from '../helpers.js';
import { fallbackHost } from '../site/serve-helpers.js';
import { formPage as leadFormPage, formPoster } from './lead-forms.js';

// Every lead becomes a person (issue 29), and GET /v0/leads lists them: through HTTP only.

let t: TestApp;
let submit: ReturnType<typeof formPoster>;
before(async () => {
  t = await startApp();
  submit = formPoster(t, await fallbackHost(t), '203.0', 113);
});
after(async () => {
  await t.close();
});

/** A published page with a lead form on a path of its own. */
const formPage = (audience: Record<string, unknown> = {}) => leadFormPage(t, audience);

const events = async (type: string) => ok(await t.req('GET', `/v0/events?type=${type}&limit=100`)).items as Json[];
const leads = async (query = '') => ok(await t.req('GET', `/v0/leads${query}`)).items as Json[];
let n = 0;
const fresh = (name: string) => `${name}-${++n}-${Date.now().toString(36)}`;

describe('lead to person', () => {
  test('a new email: a person with name, email, phone and the email domain; person.created; the log; form.submitted with personId; a lead', async () => {
    const { page, audience, path } = await formPage();
    const email = `${fresh('ada')}@Lovelace.example`;
    const res = await submit(path, { name: 'Ada Lovelace', email, phone: '+14155550123' });
    assert.equal(res.statusCode, 303);
    const submitted = (await events('form.submitted')).find((e) => e.payload.data.email === email);
    assert.ok(submitted, 'form.submitted');
    const personId = submitted.payload.data.personId;
    assert.match(personId, /^person_[0-9a-z]{26}$/);
    const person = ok(await t.req('GET', `/v0/persons/${personId}`));
    assert.equal(person.name, 'Ada Lovelace');
    assert.equal(person.email, email);
    assert.equal(person.phoneNumber, '+14155550123');
    assert.equal(person.domain, 'Lovelace.example');
    const created = (await events('person.created')).filter((e) => e.payload.data.personId === personId);
    assert.equal(created.length, 1);
    const logs = ok(await t.req('GET', `/v0/persons/${personId}/logs`)).items as Json[];
    assert.equal(logs.length, 1);
    assert.equal(logs[0].type, 'form-submitted');
    assert.equal(logs[0].payload.formSubmissionId, submitted.payload.data.formSubmissionId);

    const [lead] = await leads(`?pageId=${page.pageId}`);
    assert.deepEqual(
      { ...lead, submittedAt: undefined, audienceSessionId: undefined },
      {
        leadId: submitted.payload.data.formSubmissionId,
        submittedAt: undefined,
        personId,
        personName: 'Ada Lovelace',
        personEmail: email,
        personPhoneNumber: '+14155550123',
        pageId: page.pageId,
        pageName: page.name,
        audienceId: audience.audienceId,
        audienceName: audience.name ?? lead.audienceName,
        actionId: submitted.payload.data.actionId,
        audienceSessionId: undefined,
        // Posted without the collector's report: the form's own session, of no referrer.
        channel: 'direct',
        channelGroup: 'Direct',
        referrerHost: '',
        utmSource: '',
        utmMedium: '',
        utmCampaign: '',
        utmTerm: '',
        utmContent: '',
        viaPersonId: null,
        submittedName: 'Ada Lovelace',
        submittedEmail: email,
        submittedPhone: '+14155550123',
      },
    );
    assert.equal(lead.submittedAt, submitted.payload.data.submittedAt);
    assert.equal(lead.audienceSessionId, submitted.payload.data.audienceSessionId);
  });

  test('an existing person by email in another case: found, not made again, not changed (an empty phone stays empty)', async () => {
    const local = fresh('grace');
    const existing = ok(await t.req('POST', '/v0/persons', { name: 'Grace Hopper', email: `${local}@navy.example` }), 201);
    const { path } = await formPage();
    assert.equal(
      (await submit(path, { name: 'G. Hopper', email: `${local.toUpperCase()}@NAVY.example`, phone: '+442071234567' })).statusCode,
      303,
    );
    const submitted = (await events('form.submitted')).find((e) => e.payload.data.email === `${local.toUpperCase()}@NAVY.example`);
    assert.equal(submitted.payload.data.personId, existing.personId);
    const person = ok(await t.req('GET', `/v0/persons/${existing.personId}`));
    assert.equal(person.name, 'Grace Hopper', 'the name is kept');
    assert.equal(person.email, `${local}@navy.example`, 'the email is kept');
    // Issue 36: a visitor's form never changes an existing person (before, it filled this phone).
    assert.deepEqual(person, existing, 'nothing of the person changed');
    assert.equal(person.phoneNumber, null);
    assert.deepEqual(
      (await events('person.updated')).filter((e) => e.payload.data.personId === existing.personId),
      [],
    );
    const [lead] = (await leads()).filter((l) => l.leadId === submitted.payload.data.formSubmissionId);
    assert.deepEqual(
      [lead.submittedName, lead.submittedEmail, lead.submittedPhone],
      ['G. Hopper', `${local.toUpperCase()}@NAVY.example`, '+442071234567'],
    );
    const made = (await events('person.created')).filter((e) => String(e.payload.data.email).toLowerCase() === `${local}@navy.example`);
    assert.equal(made.length, 1, 'only the API made one');
    const logs = ok(await t.req('GET', `/v0/persons/${existing.personId}/logs`)).items as Json[];
    assert.deepEqual(
      logs.map((l) => l.type),
      ['form-submitted'],
    );
  });

  test('two leads of one new email at once, on two visits: one person', async () => {
    const { path } = await formPage();
    const email = `${fresh('twice')}@example.com`;
    const [a, b] = await Promise.all([submit(path, { name: 'Twice', email }), submit(path, { name: 'Twice', email: email.toUpperCase() })]);
    assert.deepEqual([a.statusCode, b.statusCode], [303, 303]);
    const submitted = (await events('form.submitted')).filter((e) => String(e.payload.data.email).toLowerCase() === email);
    assert.equal(submitted.length, 2);
    assert.equal(submitted[0].payload.data.personId, submitted[1].payload.data.personId);
    const made = (await events('person.created')).filter((e) => String(e.payload.data.email).toLowerCase() === email);
    assert.equal(made.length, 1);
  });

  test('account link by the email domain, as the person API does', async () => {
    const domain = `${fresh('acme')}.example`;
    const account = ok(await t.req('POST', '/v0/accounts', { name: 'Acme', domain }), 201);
    assert.equal(account.linkedPersonsCount, 0);
    const { path } = await formPage();
    assert.equal((await submit(path, { name: 'Wile E.', email: `wile@${domain.toUpperCase()}` })).statusCode, 303);
    assert.equal(ok(await t.req('GET', `/v0/accounts/${account.accountId}`)).linkedPersonsCount, 1);
  });

  test("on an audience of a person, the lead is that person's; honeypot and invalid posts make no one", async () => {
    const owner = ok(await t.req('POST', '/v0/persons', { name: 'Owner' }), 201);
    const { page, path } = await formPage({ personId: owner.personId });
    const email = `${fresh('someone')}@example.com`;
    assert.equal((await submit(path, { name: 'Someone', email })).statusCode, 303);
    const [lead] = await leads(`?pageId=${page.pageId}`);
    assert.equal(lead.personId, owner.personId);
    const before = (await events('person.created')).length;
    const other = await formPage();
    assert.equal((await submit(other.path, { name: 'Bot', email: `${fresh('bot')}@example.com`, website: 'http://spam' })).statusCode, 303);
    assert.equal((await submit(other.path, { name: 'Bad', email: 'not-an-email' })).statusCode, 400);
    assert.equal((await events('person.created')).length, before);
    assert.deepEqual(await leads(`?pageId=${other.page.pageId}`), []);
  });

  test('erasing the person removes their leads from the list and the export', async () => {
    const { page, path } = await formPage();
    const email = `${fresh('erase')}@example.com`;
    assert.equal((await submit(path, { name: 'Erase Me', email })).statusCode, 303);
    const [lead] = await leads(`?pageId=${page.pageId}`);
    assert.equal(lead.personEmail, email);
    assert.equal((await t.req('DELETE', `/v0/persons/${lead.personId}`)).status, 204);
    assert.deepEqual(await leads(`?pageId=${page.pageId}`), []);
    const csv = await t.req('GET', `/v0/leads?pageId=${page.pageId}`, undefined, { headers: { accept: 'text/csv' } });
    assert.equal(csv.status, 200);
    assert.doesNotMatch(csv.text, new RegExp(email));
    assert.equal(csv.text.trim().split('\r\n').length, 1, 'the header only');
  });
});

describe('GET /v0/leads', () => {
  test('newest first, by page and dates, pages with cursors bound to their filters, CSV', async () => {
    const { page, path } = await formPage();
    const emails: string[] = [];
    for (let i = 0; i < 3; i++) {
      emails.push(`${fresh(`list${i}`)}@example.com`);
      assert.equal((await submit(path, { name: `Lead ${i}`, email: emails[i] as string })).statusCode, 303);
    }
    const all = await leads(`?pageId=${page.pageId}`);
    assert.deepEqual(
      all.map((l) => l.personEmail),
      [...emails].reverse(),
    );
    const first = ok(await t.req('GET', `/v0/leads?pageId=${page.pageId}&limit=2`));
    assert.equal(first.items.length, 2);
    assert.equal(first.hasMore, true);
    assert.equal(first.totalCount, 3);
    const second = ok(await t.req('GET', `/v0/leads?pageId=${page.pageId}&limit=2&cursor=${first.nextCursor}`));
    assert.deepEqual(
      second.items.map((l: Json) => l.personEmail),
      [emails[0]],
    );
    expectProblem(await t.req('GET', `/v0/leads?limit=2&cursor=${first.nextCursor}`), 400, 'validation_failed', ['/cursor']);
    const newest = all[0].submittedAt as string;
    assert.deepEqual(
      (await leads(`?pageId=${page.pageId}&startDate=${encodeURIComponent(newest)}`)).map((l) => l.personEmail),
      [emails[2]],
    );
    assert.deepEqual(
      (await leads(`?pageId=${page.pageId}&endDate=${encodeURIComponent(newest)}`)).map((l) => l.personEmail),
      [emails[1], emails[0]],
    );
    expectProblem(await t.req('GET', '/v0/leads?startDate=2026-02-01T00:00:00Z&endDate=2026-01-01T00:00:00Z'), 400, 'validation_failed', [
      '/startDate',
    ]);
    expectProblem(await t.req('GET', '/v0/leads?startDate=yesterday'), 400, 'validation_failed', ['/startDate']);
    ok(await t.req('GET', '/v0/leads?limit=100'));
    expectProblem(await t.req('GET', '/v0/leads?limit=101'), 400, 'validation_failed', ['/limit']);
    expectProblem(await t.req('GET', '/v0/leads?limit=0'), 400, 'validation_failed', ['/limit']);
    expectProblem(await t.req('GET', '/v0/leads?pageId=page_00000000000000000000000000'), 404, 'not_found');
    expectProblem(await t.req('GET', '/v0/leads?unknown=1'), 400, 'validation_failed');

    const csv = await t.req('GET', `/v0/leads?pageId=${page.pageId}`, undefined, { headers: { accept: 'text/csv' } });
    assert.equal(csv.status, 200);
    assert.match(String(csv.headers['content-type']), /^text\/csv/);
    const lines = csv.text.trim().split('\r\n');
    assert.equal(
      lines[0],
      'leadId,submittedAt,personId,personName,personEmail,personPhoneNumber,pageId,pageName,audienceId,audienceName,actionId,audienceSessionId,channel,channelGroup,referrerHost,utmSource,utmMedium,utmCampaign,utmTerm,utmContent,viaPersonId,submittedName,submittedEmail,submittedPhone',
    );
    assert.equal(lines.length, 4);
    assert.ok((lines[1] as string).includes(emails[2] as string));
    expectProblem(await t.req('GET', '/v0/leads?limit=5', undefined, { headers: { accept: 'text/csv' } }), 400, 'validation_failed', [
      '/limit',
    ]);
  });

  test("a formula in a lead's name is defused in the CSV; another tenant sees none of these leads", async () => {
    const { page, path } = await formPage();
    assert.equal((await submit(path, { name: '=HYPERLINK("http://evil")', email: `${fresh('csv')}@example.com` })).statusCode, 303);
    const csv = await t.req('GET', `/v0/leads?pageId=${page.pageId}`, undefined, { headers: { accept: 'text/csv' } });
    assert.match(csv.text, /"'=HYPERLINK\(""http:\/\/evil""\)"/);
    const other = await t.newTenant('Other');
    const theirs = ok(await t.req('GET', '/v0/leads', undefined, { key: other.key }));
    assert.deepEqual(theirs.items, []);
    expectProblem(await t.req('GET', `/v0/leads?pageId=${page.pageId}`, undefined, { key: other.key }), 404, 'not_found');
  });
});
