import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startApp, type Json, type TestApp } from '../helpers.js';
import { ok, pageWithAudiences, sleep, statusEvents, until, versionsOf } from './common.js';
import { contentFor, fakeOpenAi, type FakeAnswer, type FakeRequest } from './fake-openai.js';

// The openai generator against an OpenAI-compatible server started here (real HTTP): what the
// request carries, and each failure mode (429 with Retry-After, 500, a malformed answer, a
// timeout), retried up to 3 times and then cancelled with a failureReason that never holds the key.
// Each test tags its audiences with a supplementaryContext that tells the fake what to do.

const SECRET = 'sk-test-secret-key-0123456789abcdef';
const TIMEOUT_MS = 600;
const MAX_PROMPT = 6000;
let t: TestApp;
let fake: Awaited<ReturnType<typeof fakeOpenAi>>;
const scenarios = new Map<string, (request: FakeRequest, nth: number) => FakeAnswer>();
const seen = new Map<string, number>();

before(async () => {
  fake = await fakeOpenAi((request) => {
    const tag = String(request.inputs?.version?.supplementaryContext ?? '');
    const nth = (seen.get(request.inputs?.version?.versionId) ?? 0) + 1;
    seen.set(request.inputs?.version?.versionId, nth);
    const scenario = scenarios.get(tag);
    return scenario ? scenario(request, nth) : { content: contentFor(request.inputs?.person?.name ?? 'you') };
  });
  t = await startApp(
    {
      AGENT: 'true',
      AGENT_GENERATOR: 'openai',
      AGENT_OPENAI_BASE_URL: fake.url,
      AGENT_OPENAI_API_KEY: SECRET,
      AGENT_OPENAI_MODEL: 'test-model-1',
      AGENT_TIMEOUT_MS: String(TIMEOUT_MS),
      AGENT_MAX_PROMPT_CHARS: String(MAX_PROMPT),
    },
    { agent: { pollMs: 20, retryBaseMs: 20 } },
  );
});
after(async () => {
  await t.close();
  await fake.close();
});

/** One audience tagged `tag`, regenerated; its new version's id. */
async function queued(tag: string, linked = 0): Promise<{ pageId: string; audienceId: string; versionId: string }> {
  const { page, audiences } = await pageWithAudiences(t, 1, { context: tag, linked });
  ok(await t.req('POST', `/v0/pages/${page.pageId}/regenerate`, {}), 202);
  const [latest] = await versionsOf(t, audiences[0].audienceId);
  assert.ok(latest);
  return { pageId: page.pageId, audienceId: audiences[0].audienceId, versionId: latest.id };
}

const requestsFor = (versionId: string) => fake.requests.filter((r) => r.inputs?.version?.versionId === versionId);

async function settled(versionId: string): Promise<Json> {
  let row: Json;
  await until(
    'the version to be published or cancelled',
    async () => {
      row = await t.app.db.selectFrom('audience_versions').selectAll().where('id', '=', versionId).executeTakeFirst();
      return row?.status === 'published' || row?.status === 'cancelled';
    },
    20_000,
  );
  return row;
}

describe('the request', () => {
  test('carries the model, the content schema as structured output, the person, and instructions; the answer is published', async () => {
    const v = await queued('plain', 1);
    const row = await settled(v.versionId);
    assert.equal(row.status, 'published');
    const [request, more] = requestsFor(v.versionId);
    assert.ok(request && !more, 'one request');
    assert.equal(request.body.model, 'test-model-1');
    assert.equal(request.headers.authorization, `Bearer ${SECRET}`);
    const format = request.body.response_format;
    assert.equal(format.type, 'json_schema');
    assert.equal(format.json_schema.strict, true);
    assert.deepEqual(Object.keys(format.json_schema.schema.properties).sort(), ['headline', 'sections', 'subheadline']);
    assert.equal(format.json_schema.schema.additionalProperties, false);
    assert.equal(request.inputs.person.name, 'Ada Lovelace 0');
    assert.equal(request.inputs.page.content.headline, 'Hello {{ person.firstName | there }}');
    const system = request.body.messages.find((m: Json) => m.role === 'system').content as string;
    assert.match(system, /only facts present in the inputs/i);
    const total = request.body.messages.reduce((n: number, m: Json) => n + m.content.length, 0);
    assert.ok(total <= MAX_PROMPT);
    const v2 = ok(await t.req('GET', `/v0/pages/${v.pageId}/audiences/${v.audienceId}/versions/${v.versionId}`));
    assert.equal(v2.content.headline, 'Hi Ada Lovelace 0');
  });

  test("the person's logs and the tenant's topics are in the prompt, cut so it stays within AGENT_MAX_PROMPT_CHARS", async () => {
    const { page, audiences } = await pageWithAudiences(t, 1, { context: 'history', linked: 1 });
    const audience = ok(await t.req('GET', `/v0/pages/${page.pageId}/audiences/${audiences[0].audienceId}`));
    for (let i = 0; i < 25; i++) {
      ok(
        await t.req('POST', `/v0/persons/${audience.personId}/logs`, {
          source: 'crm',
          type: 'note',
          payload: { text: `${i} ${'x'.repeat(900)}` },
        }),
        201,
      );
    }
    const topic = ok(await t.req('POST', '/v0/topics', { title: 'Pricing' }), 201);
    ok(await t.req('POST', `/v0/topics/${topic.topicId}/entries`, { content: { type: 'text', content: 'y'.repeat(5000) } }), 201);
    ok(await t.req('POST', `/v0/pages/${page.pageId}/regenerate`, {}), 202);
    const [latest] = await versionsOf(t, audiences[0].audienceId);
    assert.equal((await settled(latest?.id as string)).status, 'published');
    const [request] = requestsFor(latest?.id as string);
    assert.ok(request);
    assert.equal(request.inputs.personLogs.length, 20, 'the 20 newest');
    assert.match(request.inputs.personLogs[0].payload, /^\{"text":"24 x+…$/, 'newest first, cut');
    assert.equal(request.inputs.topics[0].title, 'Pricing');
    assert.ok(request.inputs.topics[0].entries[0].content.length < 5000);
    const total = request.body.messages.reduce((n: number, m: Json) => n + m.content.length, 0);
    assert.ok(total <= MAX_PROMPT && total > MAX_PROMPT - 500, `${total} characters`);
  });
});

describe('failures', () => {
  test('429 with Retry-After: the next try waits as asked, then succeeds', async () => {
    scenarios.set('rate-limited', (_r, nth) =>
      nth === 1 ? { status: 429, headers: { 'retry-after': '1' } } : { content: contentFor('after the wait') },
    );
    const v = await queued('rate-limited');
    assert.equal((await settled(v.versionId)).status, 'published');
    const [first, second] = requestsFor(v.versionId);
    assert.ok(first && second);
    assert.ok(second.at - first.at >= 950, `retried after ${second.at - first.at} ms`);
  });

  test('500 twice, then an answer: published after the retries, never cancelled', async () => {
    scenarios.set('flaky', (_r, nth) => (nth <= 2 ? { status: 500 } : { content: contentFor('third time') }));
    const v = await queued('flaky');
    const row = await settled(v.versionId);
    assert.equal(row.status, 'published');
    assert.equal(row.failure_reason, null);
    assert.equal(requestsFor(v.versionId).length, 3);
    const moves = (await statusEvents(t, v.versionId)).map((e) => e.data.status);
    assert.deepEqual(moves, ['queued', 'processing', 'published']);
  });

  test('a malformed answer is a failure: after 3 retries the version is cancelled with the reason, in its event too', async () => {
    let n = 0;
    scenarios.set('malformed', () =>
      n++ % 2 === 0
        ? { content: 'not json at all' }
        : { content: JSON.stringify({ headline: 'x'.repeat(201), subheadline: '', sections: [] }) },
    );
    const v = await queued('malformed');
    const row = await settled(v.versionId);
    assert.equal(row.status, 'cancelled');
    assert.equal(requestsFor(v.versionId).length, 4, 'the first try and 3 retries');
    assert.match(row.failure_reason, /openai: the answer is not valid content \(\/headline/);
    const version = ok(await t.req('GET', `/v0/pages/${v.pageId}/audiences/${v.audienceId}/versions/${v.versionId}`));
    assert.equal(version.failureReason, row.failure_reason);
    assert.equal(version.content, null, 'nothing was written');
    const [event] = (await statusEvents(t, v.versionId)).filter((e) => e.data.status === 'cancelled');
    assert.equal(event.previousStatus, 'processing');
    assert.equal(event.data.failureReason, row.failure_reason);
  });

  test('an answer over 512 KB is not valid content (issue 45): cancelled after the retries, nothing written', async () => {
    const big = {
      headline: 'Big',
      subheadline: '',
      sections: Array.from({ length: 27 }, () => ({ heading: 'h', body: 'b'.repeat(20_000) })),
    };
    scenarios.set('oversized', () => ({ content: JSON.stringify(big) }));
    const v = await queued('oversized');
    const row = await settled(v.versionId);
    assert.equal(row.status, 'cancelled');
    assert.match(row.failure_reason, /openai: the answer is not valid content \(\/ is \d+ bytes as JSON; a content is at most 512 KB/);
    const version = ok(await t.req('GET', `/v0/pages/${v.pageId}/audiences/${v.audienceId}/versions/${v.versionId}`));
    assert.equal(version.content, null, 'nothing was written');
  });

  test('a timeout is a failure, retried, then cancelled with the reason', async () => {
    scenarios.set('slow', () => ({ delayMs: TIMEOUT_MS * 3, content: contentFor('too late') }));
    const v = await queued('slow');
    const row = await settled(v.versionId);
    assert.equal(row.status, 'cancelled');
    assert.equal(row.failure_reason, `openai: no answer within ${TIMEOUT_MS} ms`);
    assert.equal(requestsFor(v.versionId).length, 4);
  });

  test('an endpoint that echoes the API key: the failureReason never holds it', async () => {
    scenarios.set('echo', () => ({
      status: 401,
      raw: { error: { message: `Incorrect API key provided: ${SECRET}`, type: 'invalid_request_error' } },
    }));
    const v = await queued('echo');
    const row = await settled(v.versionId);
    assert.equal(row.status, 'cancelled');
    assert.match(row.failure_reason, /^openai: HTTP 401/);
    assert.ok(!row.failure_reason.includes(SECRET));
    assert.ok(!row.failure_reason.includes(SECRET.slice(0, 12)));
    const events = await statusEvents(t, v.versionId);
    assert.ok(!JSON.stringify(events).includes(SECRET));
  });
});

describe('cancelled while processing', () => {
  test('the late answer is dropped: the version stays cancelled and keeps its content', async () => {
    let release: () => void = () => {};
    const hold = new Promise<void>((r) => (release = r));
    scenarios.set('cancel-me', () => ({ hold, content: contentFor('late') }));
    const v = await queued('cancel-me');
    await until('the generation to start', async () => requestsFor(v.versionId).length === 1);
    const base = `/v0/pages/${v.pageId}/audiences/${v.audienceId}/versions/${v.versionId}`;
    assert.equal(ok(await t.req('GET', base)).status, 'processing');
    assert.equal(ok(await t.req('POST', `${base}/cancel`)).status, 'cancelled');
    release();
    await sleep(300);
    const version = ok(await t.req('GET', base));
    assert.equal(version.status, 'cancelled');
    assert.equal(version.content, null);
    assert.equal(version.failureReason, null);
    assert.equal(version.publishedAt, null);
    assert.deepEqual(
      (await statusEvents(t, v.versionId)).map((e) => e.data.status),
      ['queued', 'processing', 'cancelled'],
    );
    const audience = ok(await t.req('GET', `/v0/pages/${v.pageId}/audiences/${v.audienceId}`));
    assert.equal(audience.publishedVersion.versionNumber, 1);
  });
});
