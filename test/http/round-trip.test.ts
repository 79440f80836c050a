import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeImage } from '../fixtures.js';
import { expectProblem, startApp, toRes, type Json, type TestApp, ok } from '../helpers.js';

// Issue 19: every resource with a PATCH takes back, unchanged, the body a GET gave: 200, nothing
// changed (updatedAt included), no event. A read-only field sent with another value is 400 naming it,
// and nothing changes; a read with one writable field changed is an ordinary update.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const newestEvent = async () => ok(await t.req('GET', '/v0/events?limit=1')).items[0]?.eventId;
/** Signed links are made anew on every read: compared without them. */
const stable = (body: Json) => {
  const { downloadUrl: _d, previewDownloadUrl: _p, ...rest } = body;
  return rest;
};

interface Case {
  /** Creates the resource; answers how to read it and where to PATCH it. */
  make(): Promise<{ read: () => Promise<Json>; url: string }>;
  /** A read-only field and a value it does not have. */
  readOnly: [field: string, other: unknown];
  /** A writable field and a new value for it. */
  writable: [field: string, value: unknown];
}

async function person(): Promise<Json> {
  return ok(
    await t.req('POST', '/v0/persons', {
      name: 'Round Trip',
      email: 'rt@example.com',
      domain: 'rt.example',
      phoneNumber: '+14155550100',
    }),
    201,
  );
}

async function page(): Promise<Json> {
  const p = ok(
    await t.req('POST', '/v0/pages', {
      name: 'RT page',
      title: 'RT',
      pageContext: 'ctx',
      pageType: 'inbound',
      actions: [
        { purpose: 'p', buttonTitle: 'A', actionType: 'link', url: 'https://example.com/a' },
        { purpose: 'p', buttonTitle: 'B', actionType: 'form', url: 'https://example.com/b' },
      ],
      scripts: [{ name: 's', description: 'd', content: '<b>x</b>', enabled: true }],
      metadata: { title: 'Meta', robots: ['noindex', 'max-snippet:20'], keywords: ['k'] },
    }),
    201,
  );
  return ok(await t.req('PATCH', `/v0/pages/${p.pageId}`, { headerActionId: p.actions[1].actionId }));
}

async function upload(): Promise<Json> {
  const bytes = await makeImage('png', 20, 10, [Math.floor(Math.random() * 255), 1, 2]);
  const res = toRes(
    await t.app.inject({ method: 'POST', url: '/v0/files', headers: { 'content-type': 'image/png', 'x-api-key': t.key }, payload: bytes }),
  );
  return ok(res, 201);
}

const get = (url: string) => async () => ok(await t.req('GET', url));

const CASES: Record<string, Case> = {
  person: {
    async make() {
      const { personId } = await person();
      return { read: get(`/v0/persons/${personId}`), url: `/v0/persons/${personId}` };
    },
    readOnly: ['slug', 'someone-else'],
    writable: ['email', null],
  },
  account: {
    async make() {
      const { accountId } = ok(await t.req('POST', '/v0/accounts', { name: 'RT', domain: `rt-${Date.now()}.example` }), 201);
      return { read: get(`/v0/accounts/${accountId}`), url: `/v0/accounts/${accountId}` };
    },
    readOnly: ['linkedPersonsCount', 7],
    writable: ['name', 'Renamed'],
  },
  'person log': {
    async make() {
      const { personId } = await person();
      const { personLogId } = ok(
        await t.req('POST', `/v0/persons/${personId}/logs`, { source: 'crm', type: 'note', payload: { a: [1, { b: 2 }] } }),
        201,
      );
      const url = `/v0/persons/${personId}/logs/${personLogId}`;
      return { read: get(url), url };
    },
    readOnly: ['source', 'web'],
    writable: ['payload', { c: 3 }],
  },
  'account log': {
    async make() {
      const { accountId } = ok(await t.req('POST', '/v0/accounts', { name: 'RT', domain: `rtl-${Date.now()}.example` }), 201);
      const { accountLogId } = ok(
        await t.req('POST', `/v0/accounts/${accountId}/logs`, { source: 'crm', type: 'call', payload: { x: 'y' } }),
        201,
      );
      const url = `/v0/accounts/${accountId}/logs/${accountLogId}`;
      return { read: get(url), url };
    },
    readOnly: ['idempotencyKey', 'k-1'],
    writable: ['payload', {}],
  },
  page: {
    async make() {
      const { pageId } = await page();
      return { read: get(`/v0/pages/${pageId}`), url: `/v0/pages/${pageId}` };
    },
    readOnly: ['audiencesCount', 1],
    writable: ['name', 'Renamed page'],
  },
  audience: {
    async make() {
      const p = await page();
      const { personId } = await person();
      const a = ok(
        await t.req('POST', `/v0/pages/${p.pageId}/audiences`, {
          customName: 'RT audience',
          personId,
          personRouteKey: `rt${Date.now()}`,
          metadataOverride: { description: 'Theirs', robots: ['nofollow'] },
        }),
        201,
      );
      const url = `/v0/pages/${p.pageId}/audiences/${a.audienceId}`;
      return { read: get(url), url };
    },
    readOnly: ['effectiveName', 'Other'],
    writable: ['customName', null],
  },
  'audience version (draft)': {
    async make() {
      const p = await page();
      const a = ok(await t.req('POST', `/v0/pages/${p.pageId}/audiences`, {}), 201);
      const versions = `/v0/pages/${p.pageId}/audiences/${a.audienceId}/versions`;
      const v = ok(
        await t.req('POST', versions, { content: { headline: 'H', subheadline: '', sections: [{ heading: 'a', body: 'b' }] } }),
        201,
      );
      return { read: get(`${versions}/${v.versionId}`), url: `${versions}/${v.versionId}` };
    },
    readOnly: ['versionNumber', 9],
    writable: ['status', 'pending'],
  },
  'audience version (published)': {
    async make() {
      const p = await page();
      const a = ok(await t.req('POST', `/v0/pages/${p.pageId}/audiences`, {}), 201);
      const url = `/v0/pages/${p.pageId}/audiences/${a.audienceId}/versions/${a.publishedVersion.versionId}`;
      return { read: get(url), url };
    },
    readOnly: ['publishedAt', '2020-01-01T00:00:00.000Z'],
    writable: ['status', 'published'],
  },
  asset: {
    async make() {
      const file = await upload();
      const { assetId } = ok(await t.req('POST', '/v0/assets', { assetType: 'image', name: 'RT', fileId: file.fileId }), 201);
      ok(await t.req('PATCH', `/v0/assets/${assetId}`, { tags: ['a', 'b'] }));
      return { read: get(`/v0/assets/${assetId}`), url: `/v0/assets/${assetId}` };
    },
    readOnly: ['tenantId', 'tenant_other'],
    writable: ['hidden', true],
  },
  'topic (default)': {
    async make() {
      const tenant = await t.newTenant('RT topics');
      const { topicId } = ok(await t.req('POST', '/v0/topics', { title: 'First' }, { key: tenant.key }), 201);
      ok(await t.req('POST', `/v0/topics/${topicId}/entries`, { content: { type: 'text', content: 'e' } }, { key: tenant.key }), 201);
      const url = `/v0/topics/${topicId}`;
      return { read: async () => ok(await t.req('GET', url, undefined, { key: tenant.key })), url, key: tenant.key };
    },
    readOnly: ['entries', []],
    writable: ['title', 'Retitled'],
  },
  'topic (not default)': {
    async make() {
      const { topicId } = ok(await t.req('POST', '/v0/topics', { title: 'Another' }), 201);
      return { read: get(`/v0/topics/${topicId}`), url: `/v0/topics/${topicId}` };
    },
    readOnly: ['createdAt', '2020-01-01T00:00:00.000Z'],
    writable: ['purpose', 'Why'],
  },
  'topic entry': {
    async make() {
      const { topicId } = ok(await t.req('POST', '/v0/topics', { title: 'With entries' }), 201);
      const e = ok(await t.req('POST', `/v0/topics/${topicId}/entries`, { content: { type: 'text', content: 'e' } }), 201);
      const url = `/v0/topics/${topicId}/entries/${e.topicEntryId}`;
      return { read: get(url), url };
    },
    readOnly: ['topicId', 'topic_other'],
    writable: ['content', { type: 'text', content: 'changed' }],
  },
  'page link': {
    async make() {
      const p = await page();
      const path = `/rt-${Date.now()}-${Math.random().toString(36).slice(2, 7)}`;
      const l = ok(await t.req('POST', '/v0/page_links', { path, target: { targetType: 'page_routing', pageId: p.pageId } }), 201);
      const read = async () =>
        ok(await t.req('GET', `/v0/page_links/search?pageId=${p.pageId}`)).items.find((x: Json) => x.pageLinkId === l.pageLinkId);
      return { read, url: `/v0/page_links/${l.pageLinkId}` };
    },
    readOnly: ['tenantDomainId', 'domain_other'],
    writable: ['path', `/rt-moved-${Date.now()}`],
  },
  'webhook subscription': {
    async make() {
      const s = ok(await t.req('POST', '/v0/webhook_subscriptions', { url: 'https://example.com/hook', events: ['person.created'] }), 201);
      const url = `/v0/webhook_subscriptions/${s.subscriptionId}`;
      return { read: get(url), url };
    },
    readOnly: ['updatedAt', '2020-01-01T00:00:00.000Z'],
    writable: ['active', false],
  },
};

describe('GET → PATCH of the unchanged body', () => {
  for (const [name, c] of Object.entries(CASES)) {
    test(`${name}: 200, nothing changed, no event; a read-only field changed is 400 naming it; a writable one is an update`, async () => {
      const made = (await c.make()) as { read: () => Promise<Json>; url: string; key?: string };
      const opts = made.key ? { key: made.key } : {};
      const read = await made.read();
      const newest = await newestEvent();

      const back = ok(await t.req('PATCH', made.url, read, opts));
      assert.deepEqual(stable(back), stable(read), 'answered as it was');
      assert.deepEqual(stable(await made.read()), stable(read), 'stored as it was, updatedAt included');
      assert.equal(await newestEvent(), newest, 'no event');

      const [field, other] = c.readOnly;
      assert.ok(field in read, `${field} is in the read`);
      const refused = await t.req('PATCH', made.url, { ...read, [field]: other }, opts);
      expectProblem(refused, 400, 'validation_failed', [`/${field}`]);
      assert.deepEqual(
        refused.body.errors.map((e: Json) => e.path),
        [`/${field}`],
      );
      assert.deepEqual(stable(await made.read()), stable(read), 'nothing changed');

      const [writable, value] = c.writable;
      const changed = ok(await t.req('PATCH', made.url, { ...read, [writable]: value }, opts));
      assert.deepEqual(changed[writable], value);
      assert.deepEqual(stable(await made.read()), stable(changed));
    });
  }
});

describe('page specifics', () => {
  test('actionIndex: accepted at its position, 400 elsewhere; reordered actions need their new positions', async () => {
    const p = await page();
    const url = `/v0/pages/${p.pageId}`;
    const [a, b] = p.actions;
    expectProblem(await t.req('PATCH', url, { actions: [b, a] }), 400, 'validation_failed', ['/actions/0/actionIndex']);
    const swapped = ok(
      await t.req('PATCH', url, {
        actions: [
          { ...b, actionIndex: 0 },
          { ...a, actionIndex: 1 },
        ],
      }),
    );
    assert.deepEqual(
      swapped.actions.map((x: Json) => x.actionId),
      [b.actionId, a.actionId],
    );
    const added = ok(await t.req('PATCH', url, { actions: [...swapped.actions, { ...a, actionId: undefined, actionIndex: 2 }] }));
    assert.equal(added.actions.length, 3);
    expectProblem(
      await t.req('PATCH', url, {
        actions: [...added.actions, { purpose: 'p', buttonTitle: 'N', actionType: 'x', url: '', actionIndex: 4 }],
      }),
      400,
      'validation_failed',
      ['/actions/3/actionIndex'],
    );
  });

  test('the image fields: accepted as read, 400 naming each other value', async () => {
    const p = await page();
    const url = `/v0/pages/${p.pageId}`;
    assert.deepEqual(ok(await t.req('PATCH', url, { metadata: p.metadata })), p);
    assert.deepEqual(ok(await t.req('PATCH', url, { metadata: { ogImageUrl: '', twitterImageFileId: '', author: 'Me' } })).metadata, {
      ...p.metadata,
      author: 'Me',
    });
    const res = await t.req('PATCH', url, {
      metadata: { ogImageUrl: 'https://x.example/a.png', ogImageFileId: 'file_x', twitterImageUrl: 'x', twitterImageFileId: 'y' },
    });
    expectProblem(res, 400, 'validation_failed', [
      '/metadata/ogImageUrl',
      '/metadata/ogImageFileId',
      '/metadata/twitterImageUrl',
      '/metadata/twitterImageFileId',
    ]);
  });

  test('several read-only fields at once are all named', async () => {
    const p = await page();
    const res = await t.req('PATCH', `/v0/pages/${p.pageId}`, {
      ...p,
      pageId: 'page_x',
      createdAt: '2020-01-01T00:00:00.000Z',
      flags: ['home_page'],
    });
    expectProblem(res, 400, 'validation_failed', ['/pageId', '/createdAt', '/flags']);
    expectProblem(await t.req('PATCH', `/v0/pages/${p.pageId}`, { createdAt: 'yesterday' }), 400, 'validation_failed', ['/createdAt']);
  });
});
