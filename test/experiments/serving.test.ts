import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { USER_AGENT } from '../browser.js';
import { ok, startApp, type Json, type TestApp } from '../helpers.js';
import { audienceOf, fallbackHost, link, publishedPage, unique, viewClaims, visit } from '../site/serve-helpers.js';

// Issue 27: arms assigned at serving time with no cookie: a holdout over persons' links, each
// person in one arm on every visit, control showing the page as a visitor with no audience sees
// it, and the leads of each arm counted as its conversions.

let t: TestApp;
let host: string;
before(async () => {
  // Each visitor posts from an address of its own: the rate limits are tested elsewhere.
  t = await startApp({ FORM_RATE_PER_MINUTE: '1000', COLLECT_RATE_PER_MINUTE: '1000' });
  host = await fallbackHost(t);
});
after(async () => {
  await t.close();
});

const FORM = { purpose: 'lead', buttonTitle: 'Send', actionType: 'form', url: '' };
const hidden = (html: string, name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html)?.[1] ?? '';
let address = 1;
const nextAddress = () => `203.0.${113 + Math.floor(address / 250)}.${(address++ % 250) + 1}`;

describe('a 50/50 holdout over 60 persons', () => {
  test('each link lands in the same arm twice; both arms get 15 to 45 units; leads count as conversions', {
    timeout: 120_000,
  }, async () => {
    const page = await publishedPage(t, {
      content: { headline: 'Hello {{person.firstName | there}}', subheadline: '', sections: [] },
      actions: [FORM],
    });
    const people: { personId: string; first: string; path: string }[] = [];
    for (let i = 0; i < 60; i++) {
      const first = `Ann${i}x`;
      const person = ok(await t.req('POST', '/v0/persons', { name: `${first} Lee` }), 201);
      const audience = await audienceOf(t, page.pageId, { personId: person.personId });
      const path = unique(`p${i}`);
      await link(t, path, { targetType: 'audience', audienceId: audience.audienceId });
      people.push({ personId: person.personId, first, path });
    }
    const base = `/v0/pages/${page.pageId}/experiments`;
    const experiment = ok(
      await t.req('POST', base, {
        name: 'Holdout',
        kind: 'holdout',
        minimumUnitsPerArm: 1,
        arms: [
          { key: 'control', weight: 50 },
          { key: 'personalised', weight: 50 },
        ],
      }),
      201,
    );
    ok(await t.req('POST', `${base}/${experiment.experimentId}/start`));

    const armOf = new Map<string, string>();
    const leads = { control: 0, personalised: 0 } as Record<string, number>;
    for (const [i, person] of people.entries()) {
      for (let round = 0; round < 2; round++) {
        const res = await visit(t, host, person.path, { remoteAddress: nextAddress(), headers: { 'user-agent': USER_AGENT } });
        assert.equal(res.statusCode, 200, res.body);
        const html = res.body as string;
        const token = hidden(html, 'token');
        const claims = viewClaims(token);
        assert.equal(claims.experimentId, experiment.experimentId);
        assert.equal(claims.unit, `person:${person.personId}`);
        const arm = claims.arm as string;
        if (round === 0) armOf.set(person.personId, arm);
        else assert.equal(arm, armOf.get(person.personId), 'the same arm on every visit');
        // Control is the page as a visitor with no audience sees it: each token's fallback.
        if (arm === 'control') assert.ok(html.includes('Hello there') && !html.includes(person.first), 'control');
        else assert.ok(html.includes(`Hello ${person.first}`), 'personalised');
        const report = await visit(t, host, '/_pam/collect', {
          method: 'POST',
          headers: { 'content-type': 'text/plain', 'user-agent': USER_AGENT },
          payload: JSON.stringify({ token, visibleMs: 1000, scroll: 10, clicks: 0, questions: 0, conversions: 0 }),
          remoteAddress: nextAddress(),
        });
        assert.equal(report.statusCode, 204, report.body);
        // A third of the persons leave a lead on their first visit.
        if (round === 0 && i % 3 === 0) {
          const posted = await visit(t, host, '/_pam/forms', {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': USER_AGENT },
            payload: new URLSearchParams({
              token,
              action: hidden(html, 'action'),
              path: hidden(html, 'path'),
              name: `${person.first} Lee`,
              email: `${person.first.toLowerCase()}@example.com`,
            }).toString(),
            remoteAddress: nextAddress(),
          });
          assert.equal(posted.statusCode, 303, posted.body);
          leads[arm] = (leads[arm] ?? 0) + 1;
        }
      }
    }

    const units = { control: 0, personalised: 0 } as Record<string, number>;
    for (const arm of armOf.values()) units[arm] = (units[arm] ?? 0) + 1;
    for (const arm of ['control', 'personalised'])
      assert.ok((units[arm] ?? 0) >= 15 && (units[arm] ?? 0) <= 45, `${arm}: ${units[arm]} units`);

    const results = ok(await t.req('GET', `${base}/${experiment.experimentId}/results`));
    const byKey = Object.fromEntries(results.arms.map((a: Json) => [a.key, a]));
    for (const arm of ['control', 'personalised']) {
      assert.equal(byKey[arm].units, units[arm], `${arm} units`);
      assert.equal(byKey[arm].visits, (units[arm] ?? 0) * 2, `${arm} visits`);
      assert.equal(byKey[arm].conversions, leads[arm], `${arm} conversions`);
    }
    assert.equal(results.arms[0].key, 'control', 'control is the baseline');

    // Every session names its experiment and arm, in the API and in the CSV.
    const listed = ok(await t.req('GET', `/v0/pages/${page.pageId}/audience_sessions?limit=100`));
    const sessions = listed.items as Json[];
    assert.equal(listed.totalCount, 120, 'two visits of each of 60 persons');
    assert.ok(sessions.every((s) => s.experimentId === experiment.experimentId && (s.arm === 'control' || s.arm === 'personalised')));
    const csv = await t.app.inject({
      method: 'GET',
      url: `/v0/pages/${page.pageId}/audience_sessions`,
      headers: { 'x-api-key': t.key, accept: 'text/csv' },
    });
    assert.equal(csv.statusCode, 200, csv.body);
    const [header = '', ...lines] = csv.body.trim().split('\r\n');
    assert.ok(header.includes(',experimentId,arm,'), header);
    assert.equal(lines.length, 120);
    const arms = [`,${experiment.experimentId},control,`, `,${experiment.experimentId},personalised,`];
    assert.ok(lines.every((line) => arms.some((arm) => line.includes(arm))));

    // Concluded with control: every covered audience sees control until the next experiment or change.
    ok(await t.req('POST', `${base}/${experiment.experimentId}/conclude`, { winner: 'control' }));
    for (const person of people.slice(0, 6)) {
      const html = (await visit(t, host, person.path)).body as string;
      assert.ok(html.includes('Hello there'), 'control after a holdout won by control');
      assert.equal(viewClaims(hidden(html, 'token')).experimentId, undefined, 'no longer in an experiment');
    }
    // A change of the page ends it: personalised again.
    ok(await t.req('PATCH', `/v0/pages/${page.pageId}`, { name: 'Renamed' }));
    const after = (await visit(t, host, people[0]?.path ?? '/')).body as string;
    assert.ok(after.includes(`Hello ${people[0]?.first}`), 'personalised after the page changed');
  });
});
