import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ok, startApp, type Json, type TestApp } from '../helpers.js';
import { audienceOf, fallbackHost, link, publishedPage, unique, visit } from '../site/serve-helpers.js';
import { type Asked, company, fakeProvider, PROVIDER_TOKEN, type Reply } from './fake-provider.js';

// Issue 39: a lead's email domain names the tenant's account of that domain, through a provider
// played by a node:http server (which checks method, path, auth and body). Through served pages
// and form posts on the tenant's domain, on both databases.

// Long enough that a provider in this process answers in time on a loaded machine; its own test times it.
const TIMEOUT_MS = 1000;
const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

/** The provider's answers by the domain's first label: acme-… a company, unknown-… none, and failures. */
function answer(asked: Asked): Reply {
  const label = asked.domain?.split('.')[0]?.replace(/-\d+.*$/, '') ?? '';
  if (label === 'acme') return { status: 200, body: company('Acme GmbH', 'acme.example') };
  if (label === 'unknown') return { status: 200, body: { company: null } };
  if (label === 'broken') return { status: 503, body: { error: 'down' } };
  if (label === 'malformed') return { status: 200, body: { company: { name: 42 } } };
  if (label === 'notjson') return { status: 200, body: 'company: Acme' };
  if (label === 'slow') return 'never';
  return { status: 500, body: {} };
}

let provider: Awaited<ReturnType<typeof fakeProvider>>;
let t: TestApp;
let host: string;
before(async () => {
  provider = await fakeProvider(answer);
  t = await startApp({
    ENRICHMENT_URL: provider.url,
    ENRICHMENT_TOKEN: PROVIDER_TOKEN,
    ENRICHMENT_TIMEOUT_MS: String(TIMEOUT_MS),
    METRICS_TOKEN,
  });
  host = await fallbackHost(t);
});
after(async () => {
  await t.close();
  await provider.close();
});

const FORM_ACTION = { purpose: 'lead', buttonTitle: 'Send', actionType: 'form', url: '' };

async function formPage(app: TestApp, key?: string) {
  const page = await publishedPage(app, { actions: [FORM_ACTION] }, key);
  const a = await audienceOf(app, page.pageId, {}, key);
  const path = unique('lead');
  await link(app, path, { targetType: 'audience', audienceId: a.audienceId }, key);
  return path;
}

let nextAddress = 1;
/** Serves the page to a new visitor and posts its form (each from an address of its own); the post's time too. */
async function submit(app: TestApp, siteHost: string, path: string, fields: Record<string, string>) {
  const html = (await visit(app, siteHost, path)).body as string;
  const hidden = (name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html)?.[1] ?? '';
  const n = nextAddress++;
  const started = performance.now();
  const res = await visit(app, siteHost, '/_pam/forms', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ token: hidden('token'), action: hidden('action'), path: hidden('path'), ...fields }).toString(),
    remoteAddress: `198.51.${100 + Math.floor(n / 250)}.${(n % 250) + 1}`,
  });
  assert.equal(res.statusCode, 303, res.body);
  return performance.now() - started;
}

const eventsOf = async (app: TestApp, type: string, key?: string) =>
  ok(await app.req('GET', `/v0/events?type=${type}&limit=100`, undefined, key ? { key } : {})).items.map(
    (e: Json) => e.payload.data,
  ) as Json[];
let n = 0;
const fresh = (label: string) => `${label}-${++n}-${Date.now().toString(36)}.example`;

/** The lead's form.submitted, and what followed it: its form.enriched or form.enrichment_failed. */
async function outcome(app: TestApp, email: string, key?: string) {
  const submitted = (await eventsOf(app, 'form.submitted', key)).find((d) => d.email === email);
  assert.ok(submitted, `form.submitted for ${email}`);
  const of = (d: Json) => d.formSubmissionId === submitted.formSubmissionId;
  const enriched = (await eventsOf(app, 'form.enriched', key)).filter(of);
  const failed = (await eventsOf(app, 'form.enrichment_failed', key)).filter(of);
  return { submitted, enriched, failed };
}

const askedAbout = (domain: string) => provider.asked.filter((a) => a.domain === domain);

describe('a lead enriched by the provider', () => {
  test("a company's domain: the provider is asked {email, domain}; a new account named by it; form.enriched", async () => {
    const path = await formPage(t);
    const domain = fresh('acme');
    const email = `Ada@${domain.toUpperCase()}`;
    await submit(t, host, path, { name: 'Ada', email });
    assert.deepEqual(askedAbout(domain), [{ email, domain }], 'the email as typed, its domain lowercased');
    const { submitted, enriched, failed } = await outcome(t, email);
    assert.deepEqual(failed, []);
    assert.equal(enriched.length, 1);
    const account = ok(await t.req('GET', `/v0/accounts/${enriched[0].accountId}`));
    assert.deepEqual([account.name, account.domain, account.linkedPersonsCount], ['Acme GmbH', domain, 1]);
    assert.deepEqual(enriched[0], {
      formSubmissionId: submitted.formSubmissionId,
      personId: submitted.personId,
      accountId: account.accountId,
      company: { domain, name: 'Acme GmbH', industry: 'Software', employees: 120, country: 'DE' },
    });
    const created = (await eventsOf(t, 'account.created')).filter((a) => a.accountId === account.accountId);
    assert.equal(created.length, 1, 'account.created once');
  });

  test('an existing account of the domain (any case) is linked, never renamed or made again', async () => {
    const path = await formPage(t);
    const domain = fresh('acme');
    const mine = ok(await t.req('POST', '/v0/accounts', { name: 'Our Acme', domain: domain.toUpperCase() }), 201);
    const first = `first@${domain}`;
    const second = `second@${domain}`;
    await submit(t, host, path, { name: 'First', email: first });
    await submit(t, host, path, { name: 'Second', email: second });
    for (const email of [first, second]) {
      const { enriched } = await outcome(t, email);
      assert.equal(enriched[0]?.accountId, mine.accountId);
    }
    const account = ok(await t.req('GET', `/v0/accounts/${mine.accountId}`));
    assert.deepEqual([account.name, account.linkedPersonsCount], ['Our Acme', 2]);
    const accounts = ok(await t.req('GET', `/v0/accounts/search?query=${encodeURIComponent(domain)}`)).items as Json[];
    assert.equal(accounts.length, 1);
  });

  test('the provider knows no company: form.enrichment_failed provider_unknown, no account', async () => {
    const path = await formPage(t);
    const domain = fresh('unknown');
    const email = `una@${domain}`;
    await submit(t, host, path, { name: 'Una', email });
    assert.equal(askedAbout(domain).length, 1);
    const { submitted, enriched, failed } = await outcome(t, email);
    assert.deepEqual(enriched, []);
    assert.deepEqual(failed, [{ formSubmissionId: submitted.formSubmissionId, personId: submitted.personId, reason: 'provider_unknown' }]);
    const accounts = ok(await t.req('GET', `/v0/accounts/search?query=${encodeURIComponent(domain)}`)).items as Json[];
    assert.deepEqual(accounts, []);
    // The person still has the domain: an account made later links them.
    assert.equal(ok(await t.req('GET', `/v0/persons/${submitted.personId}`)).domain, domain);
  });

  for (const label of ['broken', 'malformed', 'notjson'] as const) {
    test(`a provider answering ${label === 'broken' ? '503' : label === 'malformed' ? 'a company of the wrong shape' : 'text'}: provider_error, the lead kept`, async () => {
      const path = await formPage(t);
      const domain = fresh(label);
      const email = `bo@${domain}`;
      await submit(t, host, path, { name: 'Bo', email });
      assert.equal(askedAbout(domain).length, 1);
      const { failed, enriched } = await outcome(t, email);
      assert.deepEqual(enriched, []);
      assert.deepEqual(
        failed.map((f) => f.reason),
        ['provider_error'],
      );
      const accounts = ok(await t.req('GET', `/v0/accounts/search?query=${encodeURIComponent(domain)}`)).items as Json[];
      assert.deepEqual(accounts, []);
    });
  }

  test('a provider that never answers: the thank-you comes within the timeout (+ the lead’s own work), provider_error', async () => {
    const path = await formPage(t);
    // The form's own work without a provider's wait, measured the same way.
    // A loaded machine may stall any one request: the best of up to three tries (each a domain not
    // asked before, so each waits for the provider) against the form's own time around it.
    let took = Number.POSITIVE_INFINITY;
    let free = 0;
    for (let i = 0; i < 3 && !(took < TIMEOUT_MS + free + 100); i++) {
      const freeBefore = await submit(t, host, path, { name: 'Quick', email: `quick-${i}-${Date.now()}@gmail.com` });
      const domain = fresh('slow');
      const email = `sam@${domain}`;
      const once = await submit(t, host, path, { name: 'Sam', email });
      const freeAfter = await submit(t, host, path, { name: 'Quick', email: `quick-after-${i}-${Date.now()}@gmail.com` });
      assert.equal(askedAbout(domain).length, 1);
      assert.ok(once >= TIMEOUT_MS - 5, `waited for the provider (${once.toFixed(0)} ms)`);
      const { failed } = await outcome(t, email);
      assert.deepEqual(
        failed.map((f) => f.reason),
        ['provider_error'],
      );
      if (once - Math.max(freeBefore, freeAfter) < took - free) [took, free] = [once, Math.max(freeBefore, freeAfter)];
    }
    assert.ok(took < TIMEOUT_MS + free + 100, `answered within the timeout: ${took.toFixed(0)} ms (the form alone ${free.toFixed(0)} ms)`);
  });

  test('a free-mail domain: never sent to the provider, no domain on the new person, free_email_domain', async () => {
    const path = await formPage(t);
    for (const freeMail of ['gmail.com', 'OUTLOOK.com', 'gmx.de']) {
      const email = `fay-${Date.now()}@${freeMail}`;
      await submit(t, host, path, { name: 'Fay', email });
      assert.equal(askedAbout(freeMail.toLowerCase()).length, 0, `${freeMail} not sent`);
      const { submitted, failed, enriched } = await outcome(t, email);
      assert.deepEqual(enriched, []);
      assert.deepEqual(
        failed.map((f) => f.reason),
        ['free_email_domain'],
      );
      assert.equal(ok(await t.req('GET', `/v0/persons/${submitted.personId}`)).domain, null, 'a mail service names no company');
    }
  });

  test('site setting enrichment: false: nothing asked, no account, form.enrichment_failed no_provider; true again turns it on', async () => {
    const { key } = await t.newTenant('Enrichment off');
    const tenantHost = await fallbackHost(t, key);
    const path = await formPage(t, key);
    const settings = ok(await t.req('PATCH', '/v0/site_settings', { enrichment: false }, { key }));
    assert.equal(settings.enrichment, false);
    assert.equal(ok(await t.req('GET', '/v0/site_settings', undefined, { key })).enrichment, false);
    const domain = fresh('acme');
    const email = `off@${domain}`;
    await submit(t, tenantHost, path, { name: 'Off', email });
    assert.equal(askedAbout(domain).length, 0);
    const { submitted, enriched, failed } = await outcome(t, email, key);
    assert.deepEqual(enriched, []);
    assert.deepEqual(failed, [{ formSubmissionId: submitted.formSubmissionId, personId: submitted.personId, reason: 'no_provider' }]);
    // Off says no_provider whatever the domain: a mail service's is not even looked at.
    const mail = `off-${n}@gmail.com`;
    await submit(t, tenantHost, path, { name: 'Off mail', email: mail });
    assert.deepEqual(
      (await outcome(t, mail, key)).failed.map((f) => f.reason),
      ['no_provider'],
    );
    assert.deepEqual(ok(await t.req('GET', '/v0/accounts/search', undefined, { key })).items, []);
    // Today's link by domain is untouched: the new person still has the email's domain.
    assert.equal(ok(await t.req('GET', `/v0/persons/${submitted.personId}`, undefined, { key })).domain, domain);

    ok(await t.req('PATCH', '/v0/site_settings', { enrichment: true }, { key }));
    const again = `on@${domain}`;
    await submit(t, tenantHost, path, { name: 'On', email: again });
    assert.equal(askedAbout(domain).length, 1);
    assert.equal((await outcome(t, again, key)).enriched.length, 1);
  });

  test('enrichment must be a boolean', async () => {
    for (const bad of ['false', 0, null]) {
      const res = await t.req('PATCH', '/v0/site_settings', { enrichment: bad });
      assert.equal(res.status, 400, JSON.stringify(bad));
      assert.ok(
        (res.body.errors as Json[]).some((e) => e.path === '/enrichment'),
        JSON.stringify(res.body),
      );
    }
  });

  test("/metrics counts the provider's answers by outcome", async () => {
    const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    const count = (outcome: string) =>
      Number(new RegExp(`^pam_enrichment_answers_total\\{purpose="lead",outcome="${outcome}"\\} (\\d+)$`, 'm').exec(res.body)?.[1] ?? 0);
    assert.ok(count('company') >= 3, res.body);
    assert.ok(count('unknown') >= 1);
    assert.ok(count('error') >= 3);
    assert.ok(count('timeout') >= 1);
  });

  test('every request the provider had was a POST to its path with the token and a documented body', () => {
    assert.deepEqual(provider.refused, []);
  });
});

describe('no provider configured', () => {
  let bare: TestApp;
  let bareHost: string;
  before(async () => {
    bare = await startApp();
    bareHost = await fallbackHost(bare);
  });
  after(async () => {
    await bare.close();
  });

  test("a company's domain: its account found or made, named by the domain; form.enriched with company {domain}", async () => {
    const path = await formPage(bare);
    const domain = fresh('nop');
    const email = `nia@${domain.toUpperCase()}`;
    await submit(bare, bareHost, path, { name: 'Nia', email });
    const { submitted, enriched, failed } = await outcome(bare, email);
    assert.deepEqual(failed, []);
    const account = ok(await bare.req('GET', `/v0/accounts/${enriched[0].accountId}`));
    assert.deepEqual([account.name, account.domain, account.linkedPersonsCount], [domain, domain, 1]);
    assert.deepEqual(enriched, [
      { formSubmissionId: submitted.formSubmissionId, personId: submitted.personId, accountId: account.accountId, company: { domain } },
    ]);
    const other = `noa@${domain}`;
    await submit(bare, bareHost, path, { name: 'Noa', email: other });
    assert.equal((await outcome(bare, other)).enriched[0].accountId, account.accountId, 'found the second time');
  });

  test('two leads of a new domain at once make one account', async () => {
    const path = await formPage(bare);
    const domain = fresh('race');
    const emails = [`a@${domain}`, `b@${domain}`, `c@${domain}`];
    await Promise.all(emails.map((email, i) => submit(bare, bareHost, path, { name: `Lead ${i}`, email })));
    const ids = new Set<string>();
    for (const email of emails) ids.add((await outcome(bare, email)).enriched[0]?.accountId);
    assert.equal(ids.size, 1);
    const accounts = ok(await bare.req('GET', `/v0/accounts/search?query=${encodeURIComponent(domain)}`)).items as Json[];
    assert.equal(accounts.length, 1);
  });

  test('a free-mail domain is still free_email_domain', async () => {
    const path = await formPage(bare);
    const email = `fin-${Date.now()}@yahoo.com`;
    await submit(bare, bareHost, path, { name: 'Fin', email });
    assert.deepEqual(
      (await outcome(bare, email)).failed.map((f) => f.reason),
      ['free_email_domain'],
    );
  });

  test('enrichment: false with no provider: no account, form.enrichment_failed no_provider', async () => {
    const { key } = await bare.newTenant('Bare and off');
    const tenantHost = await fallbackHost(bare, key);
    const path = await formPage(bare, key);
    ok(await bare.req('PATCH', '/v0/site_settings', { enrichment: false }, { key }));
    const email = `ola@${fresh('nop')}`;
    await submit(bare, tenantHost, path, { name: 'Ola', email });
    const { submitted, enriched, failed } = await outcome(bare, email, key);
    assert.deepEqual(enriched, []);
    assert.deepEqual(failed, [{ formSubmissionId: submitted.formSubmissionId, personId: submitted.personId, reason: 'no_provider' }]);
    assert.deepEqual(ok(await bare.req('GET', '/v0/accounts/search', undefined, { key })).items, []);
  });
});
