import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
// The SDK as a client would use it for sites and experiences (issue 48 §6), typed by the document.
import { ApiError, createClient, type Experience, type ExperienceCreate, type PamClient, type Site } from '../../sdk/src/index.js';
import { startApp, type TestApp } from '../helpers.js';

let t: TestApp;
let api: PamClient;

before(async () => {
  t = await startApp({ PUBLIC_BASE_URL: 'https://pam.example.com' });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  api = createClient({ baseUrl: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`, apiKey: t.key });
});
after(async () => t.close());

describe('the SDK: sites and experiences', () => {
  test('a site, its experiences, a change of status, the lists by page, a refusal', async () => {
    const { data: site } = await api.POST('/v0/sites', { body: { name: 'Shop', origins: ['https://shop.example'] } });
    const typed: Site = site;
    assert.equal(typed.snippet, `<script src="https://pam.example.com/_pam/site.js?site=${site.siteKey}"></script>`);

    const body: ExperienceCreate = {
      siteId: site.siteId,
      name: 'Hero',
      urlMatch: { type: 'prefix', value: '/pricing' },
      rules: { match: 'all', conditions: [{ field: 'company.employees', operator: 'gte', value: 50 }] },
      changes: [
        { selector: 'h1', action: 'text', value: 'Plans for {{company.name | your team}}' },
        { selector: 'a.cta', action: 'attribute', attribute: 'href', value: '/demo' },
      ],
    };
    const ids: string[] = [];
    for (const name of ['One', 'Two', 'Three'])
      ids.push((await api.POST('/v0/experiences', { body: { ...body, name } })).data.experienceId);
    const { data: live } = await api.PATCH('/v0/experiences/{experience_id}', {
      params: { path: { experience_id: ids[0]! } },
      body: { status: 'live' },
    });
    const experience: Experience = live;
    assert.equal(experience.status, 'live');
    assert.deepEqual(experience.changes, body.changes);

    const seen: string[] = [];
    for await (const e of api.paginate('/v0/experiences', { params: { query: { siteId: site.siteId, limit: 2 } } }))
      seen.push(e.experienceId);
    assert.deepEqual(seen, [...ids].reverse());

    const refused = await api
      .POST('/v0/experiences', { body: { ...body, changes: [{ selector: 'a', action: 'attribute', attribute: 'src', value: 'data:x' }] } })
      .catch((err: unknown) => err);
    assert.ok(refused instanceof ApiError);
    assert.deepEqual(
      refused.errors.map((e) => e.path),
      ['/changes/0/value'],
    );

    await api.DELETE('/v0/sites/{site_id}', { params: { path: { site_id: site.siteId } } });
    const gone = await api
      .GET('/v0/experiences/{experience_id}', { params: { path: { experience_id: ids[0]! } } })
      .catch((err: unknown) => err);
    assert.ok(gone instanceof ApiError && gone.status === 404);
  });
});
