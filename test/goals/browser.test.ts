import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { available, CHROMIUM, skip, until, USER_AGENT } from '../browser.js';
import { startApp, type Json, type TestApp, ok } from '../helpers.js';
import { fallbackHost } from '../site/serve-helpers.js';

// The measuring script in real headless Chromium: the tenant's own script calls pam.track with
// values, the visitor clicks page actions, and the goals of the page's analytics count them.

let t: TestApp;
let browser: Browser;
let origin: string;
before(async () => {
  if (skip) return;
  assert.ok(available, `no browser at ${CHROMIUM}`);
  t = await startApp();
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const fallback = await fallbackHost(t);
  origin = `http://${fallback}:${new URL(address).port}`;
  // The browser's own agent too: headless Chromium sends an unloading page's beacons under it (test/onsite/measure.browser.test.ts).
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', `--user-agent=${USER_AGENT}`] });
});
after(async () => {
  await browser?.close();
  await t?.close();
});

// Clicks on actions stay on the page (the tenant's script keeps them), so the test can read on.
const TENANT_SCRIPT = `<script>
addEventListener('click', function (e) { e.preventDefault(); });
addEventListener('load', function () {
  pam.track('signup', { value: 20 });
  pam.track('signup', { value: 22.5 });
  pam.track('signup', { value: 'a lot' });
  pam.track('signup', { value: -5 });
  document.body.dataset.tracked = 'yes';
});
</script>`;

describe('goals measured in a real browser', { skip }, () => {
  test('pam.track sums its values; action clicks count by purpose, header and list alike', { timeout: 90_000 }, async () => {
    const page = ok(
      await t.req('POST', '/v0/pages', {
        name: 'Tracked',
        title: 'Tracked',
        pageContext: 'ctx',
        pageType: 'inbound',
        status: 'published',
        actions: [
          { purpose: 'learn', buttonTitle: 'Read more', actionType: 'link', url: 'https://example.com/more' },
          { purpose: 'demo', buttonTitle: 'Book a demo', actionType: 'link', url: 'https://example.com/demo' },
        ],
        scripts: [{ name: 'track', description: '', content: TENANT_SCRIPT, enabled: true }],
      }),
      201,
    );
    const withHeader = ok(await t.req('PATCH', `/v0/pages/${page.pageId}`, { headerActionId: page.actions[1].actionId }));
    assert.equal(withHeader.headerActionId, page.actions[1].actionId);
    const audience = ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, {}), 201);
    ok(
      await t.req('POST', '/v0/page_links', { path: '/tracked', target: { targetType: 'audience', audienceId: audience.audienceId } }),
      201,
    );
    const signup = ok(await t.req('POST', '/v0/goals', { name: 'Signup', kind: 'event', eventName: 'signup', currency: 'USD' }), 201);
    const demo = ok(await t.req('POST', '/v0/goals', { name: 'Demo', kind: 'action', actionPurpose: 'demo' }), 201);
    const learn = ok(await t.req('POST', '/v0/goals', { name: 'Learn', kind: 'action', actionPurpose: 'learn' }), 201);

    const context = await browser.newContext({ userAgent: USER_AGENT });
    const tab = await context.newPage();
    assert.equal((await tab.goto(`${origin}/tracked`))?.status(), 200);
    // A locator, not waitForFunction: its polling evaluates in the page, where the CSP forbids eval.
    await tab.locator('body[data-tracked="yes"]').waitFor({ state: 'attached' });
    // The header's button and the second action are both "demo"; the first action is "learn".
    await tab.locator('header.top a.button').click();
    await tab.locator('.actions > a.button').nth(1).click();
    await tab.locator('.actions > a.button').nth(0).click();
    await tab.locator('h1').first().click();

    const goalsOf = async () => {
      const goals = ok(await t.req('GET', `/v0/pages/${page.pageId}/analytics`)).goals as Json[];
      return new Map(goals.map((g) => [g.goalId, g]));
    };
    // What the script reported, as the visit stores it: each call and click counted by name.
    const counts = async () =>
      Object.fromEntries(
        (
          await t.app.db
            .selectFrom('visit_events')
            .select(['kind', 'name', 'count'])
            .where('audience_id', '=', audience.audienceId)
            .execute()
        )
          .filter((e) => e.kind !== 'path')
          .map((e) => [`${e.kind}:${e.name}`, Number(e.count)]),
      );
    await until('the tracked calls and clicks', async () => {
      const c = await counts();
      return c['event:signup'] === 4 && c['action:demo'] === 2 && c['action:learn'] === 1;
    });
    // A goal counts once per visit (issue 36), however many calls or clicks the visit made.
    const found = await until('the tracked goals', async () => {
      const goals = await goalsOf();
      const done =
        goals.get(signup.goalId)?.completions === 1 &&
        goals.get(demo.goalId)?.completions === 1 &&
        goals.get(learn.goalId)?.completions === 1;
      return done ? goals : undefined;
    });
    await context.close();
    // Values that are not numbers from 0 to 1e9 count the call, not the value.
    assert.deepEqual(
      [
        found.get(signup.goalId).value,
        found.get(signup.goalId).currency,
        found.get(signup.goalId).uniqueCompletions,
        found.get(signup.goalId).conversionRate,
      ],
      [42.5, 'USD', 1, 1],
    );
    assert.equal(found.get(demo.goalId).value, 0);
  });
});
