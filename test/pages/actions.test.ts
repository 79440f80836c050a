import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, type Json, ok, startApp, type TestApp } from '../helpers.js';

// Issue 38: a link action needs a button title and an https URL; a form action needs no URL,
// and stores none. Other action types keep the reference's fields (a URL, stored as given).

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const PAGE = { name: 'Actions', title: 'Actions', pageContext: 'Testing actions', pageType: 'inbound' };
const LINK = { purpose: 'book', buttonTitle: 'Book a demo', actionType: 'link', url: 'https://example.com/demo' };
const FORM = { purpose: 'lead', buttonTitle: 'Call me back', actionType: 'form' };
const create = (actions: Json[]) => t.req('POST', '/v0/pages', { ...PAGE, actions });
const pageCount = async () => ok(await t.req('GET', '/v0/pages?limit=1')).totalCount as number;

describe('link actions', () => {
  test('an https URL and a button title: stored as given', async () => {
    for (const url of [
      'https://example.com/demo',
      'HTTPS://example.com',
      'https://example.com/a?b=c#d',
      'https://xn--bcher-kva.example/',
    ]) {
      const page = ok(await create([{ ...LINK, url }]), 201);
      assert.equal(page.actions[0].url, url);
    }
    // A one-character title is just inside.
    assert.equal(ok(await create([{ ...LINK, buttonTitle: 'G' }]), 201).actions[0].buttonTitle, 'G');
  });

  test('no URL, or one that is not https, is 400 at /actions/i/url; a blank title at /actions/i/buttonTitle; nothing written', async () => {
    const before = await pageCount();
    const { url: _, ...noUrl } = LINK;
    const missing = await create([FORM, noUrl]);
    expectProblem(missing, 400, 'validation_failed', ['/actions/1/url']);
    assert.match(missing.body.errors[0].message, /https URL/);
    for (const url of [
      '',
      'http://example.com/demo',
      'javascript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      '//example.com/demo',
      '/demo',
      'example.com/demo',
      ' https://example.com/demo',
      'https://',
      'https:///',
      'mailto:sales@example.com',
    ]) {
      const res = await create([{ ...LINK, url }]);
      expectProblem(res, 400, 'validation_failed', ['/actions/0/url']);
      assert.match(res.body.errors[0].message, /https URL/, url);
    }
    for (const buttonTitle of ['', ' ', '\t\n']) {
      const res = await create([{ ...LINK, buttonTitle }]);
      expectProblem(res, 400, 'validation_failed', ['/actions/0/buttonTitle']);
      assert.match(res.body.errors[0].message, /button title/);
    }
    // Both at once, each at its pointer.
    expectProblem(await create([{ ...LINK, buttonTitle: '', url: 'http://x.example' }]), 400, 'validation_failed', [
      '/actions/0/buttonTitle',
      '/actions/0/url',
    ]);
    assert.equal(await pageCount(), before);
  });

  test('PATCH holds the same rules, and a refused patch changes nothing', async () => {
    const page = ok(await create([LINK]), 201);
    const keep = { ...LINK, actionId: page.actions[0].actionId };
    expectProblem(
      await t.req('PATCH', `/v0/pages/${page.pageId}`, { actions: [{ ...keep, url: 'http://example.com' }] }),
      400,
      'validation_failed',
      ['/actions/0/url'],
    );
    expectProblem(
      await t.req('PATCH', `/v0/pages/${page.pageId}`, { name: 'Renamed', actions: [{ ...keep, buttonTitle: ' ' }] }),
      400,
      'validation_failed',
      ['/actions/0/buttonTitle'],
    );
    const now = ok(await t.req('GET', `/v0/pages/${page.pageId}`));
    assert.equal(now.name, PAGE.name);
    assert.deepEqual(now.actions, page.actions);
    // Sent back as read: accepted, unchanged.
    assert.deepEqual(ok(await t.req('PATCH', `/v0/pages/${page.pageId}`, { actions: page.actions })).actions, page.actions);
  });
});

describe('form actions', () => {
  test('need no URL; one sent is not stored; answered with url "" (the reference\'s Action has a url string)', async () => {
    const page = ok(
      await create([FORM, { ...FORM, purpose: 'other', url: 'https://example.com/contact' }, { ...FORM, url: 'javascript:x' }]),
      201,
    );
    assert.deepEqual(
      page.actions.map((a: Json) => a.url),
      ['', '', ''],
    );
    assert.deepEqual(Object.keys(page.actions[0]).sort(), ['actionId', 'actionIndex', 'actionType', 'buttonTitle', 'purpose', 'url']);
    // A blank title is the marketer's business for a form (the form has its own fields).
    assert.equal(ok(await create([{ ...FORM, buttonTitle: '' }]), 201).actions[0].buttonTitle, '');
    // Sent back as read (url ""), it stays as it is.
    const again = ok(await t.req('PATCH', `/v0/pages/${page.pageId}`, { actions: page.actions }));
    assert.deepEqual(again.actions, page.actions);
  });

  test('the form fields keep their types: a url of another type is 400 at its pointer', async () => {
    expectProblem(await create([{ ...FORM, url: 5 }]), 400, 'validation_failed', ['/actions/0/url']);
    expectProblem(await create([{ ...FORM, purpose: undefined, buttonTitle: null }]), 400, 'validation_failed', [
      '/actions/0/purpose',
      '/actions/0/buttonTitle',
    ]);
  });
});

describe('other action types', () => {
  test('still need a url (any string, stored as given), as the reference lists it', async () => {
    const { url: _, ...noUrl } = LINK;
    expectProblem(await create([{ ...noUrl, actionType: 'calendar' }]), 400, 'validation_failed', ['/actions/0/url']);
    const page = ok(await create([{ ...LINK, actionType: 'calendar', url: 'tel:+14155550100' }]), 201);
    assert.equal(page.actions[0].url, 'tel:+14155550100');
  });
});
