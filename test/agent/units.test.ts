import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildPrompt, cutAll } from '../../src/agent/prompt.js';
import { MAX_RETRIES, parseRetryAfter, retryIn } from '../../src/agent/retry-policy.js';
import { templateContent } from '../../src/agent/template.js';
import type { GeneratorInput } from '../../src/agent/types.js';
import { ConfigError, loadConfig } from '../../src/config.js';

// The agent's pure parts: the retry policy, the prompt budget, the template, its configuration.

test('retries: exponential with jitter, never sooner than Retry-After, and none after the third', () => {
  assert.equal(retryIn({ failures: 1, baseMs: 1000, random: 0 }), 500);
  assert.equal(retryIn({ failures: 1, baseMs: 1000, random: 0.999999 }), 1000);
  assert.equal(retryIn({ failures: 2, baseMs: 1000, random: 0 }), 1000);
  assert.equal(retryIn({ failures: 3, baseMs: 1000, random: 0 }), 2000);
  assert.equal(retryIn({ failures: MAX_RETRIES + 1, baseMs: 1000, random: 0 }), null);
  assert.equal(retryIn({ failures: 1, baseMs: 1000, random: 0, retryAfterMs: 7000 }), 7000);
  assert.equal(retryIn({ failures: 1, baseMs: 1000, random: 0, retryAfterMs: 24 * 3600_000 }), 600_000, 'capped at 10 minutes');
  assert.equal(parseRetryAfter('2', 0), 2000);
  assert.equal(parseRetryAfter('0.5', 0), 500);
  assert.equal(parseRetryAfter(new Date(10_000).toUTCString(), 4000), 6000);
  assert.equal(parseRetryAfter('soon', 0), undefined);
  assert.equal(parseRetryAfter(undefined, 0), undefined);
});

test('cutAll: within the budget, short texts whole, long ones cut to one length', () => {
  assert.deepEqual(cutAll(['a', 'bb'], 10), ['a', 'bb']);
  const cut = cutAll(['short', 'x'.repeat(100), 'y'.repeat(50)], 45);
  assert.equal(cut[0], 'short');
  assert.equal(cut[1]?.length, 20);
  assert.equal(cut[2]?.length, 20);
  assert.ok(cut[1]?.endsWith('…'));
  assert.deepEqual(cutAll(['abc', 'def'], 0), ['', '']);
});

function input(over: Partial<GeneratorInput> = {}): GeneratorInput {
  return {
    page: {
      pageId: 'page_1',
      name: 'P',
      title: 'T',
      pageContext: 'c',
      pageType: 'inbound',
      content: { headline: 'H {{ person.name }}', subheadline: 'S', sections: [{ heading: 'A', body: 'B' }] },
    },
    audience: { audienceId: 'audience_1', name: 'Audience 1', personRouteKey: null },
    version: {
      versionId: 'version_1',
      audienceId: 'audience_1',
      versionNumber: 2,
      status: 'processing',
      isNewPageAgent: false,
      supplementaryContext: null,
      content: null,
      origin: 'generated',
      queueDurationMs: 1,
      createdAt: '2026-01-01T00:00:00.000Z',
      becameDraftAt: null,
      queuedAt: null,
      publishedAt: null,
      cancelledAt: null,
      obsoleteAt: null,
      archivedAt: null,
      failureReason: null,
    },
    person: null,
    account: null,
    personLogs: [],
    accountLogs: [],
    topics: [],
    ...over,
  };
}

test('the prompt never exceeds the budget, whatever the inputs; small inputs go whole', () => {
  const small = buildPrompt(input(), 48_000);
  assert.deepEqual(JSON.parse(small.user).page.content, input().page.content);
  const log = (i: number) => ({ source: 's', type: 't', payload: { text: `"quoted" \\ ${'é'.repeat(3000)} ${i}` }, createdAt: 'x' });
  const huge = input({
    page: {
      ...input().page,
      content: { headline: 'H', subheadline: '', sections: Array.from({ length: 50 }, () => ({ heading: 'h', body: 'b'.repeat(20_000) })) },
    },
    version: { ...input().version, supplementaryContext: 'c'.repeat(100_000) },
    personLogs: Array.from({ length: 20 }, (_, i) => log(i)),
    accountLogs: Array.from({ length: 20 }, (_, i) => log(i)),
  });
  for (const max of [4000, 5000, 48_000, 200_000]) {
    const p = buildPrompt(huge, max);
    assert.ok(p.system.length + p.user.length <= max, `${p.system.length + p.user.length} > ${max}`);
  }
  // The page's texts first: here they take the whole room, and the logs get none of it.
  assert.equal(JSON.parse(buildPrompt(huge, 200_000).user).personLogs[0].payload, '');
  // A page that fits whole leaves the rest to the logs, cut to one length.
  const roomy = buildPrompt({ ...huge, page: input().page, version: input().version }, 48_000);
  const parsed = JSON.parse(roomy.user);
  assert.deepEqual(parsed.page.content, input().page.content);
  assert.ok(parsed.personLogs[0].payload.endsWith('…'));
  assert.ok(parsed.personLogs[0].payload.length > 900);
  assert.ok(roomy.system.length + roomy.user.length > 47_000, 'the room is used');
});

test('the template: the page content, the context as a last section, tokens kept; a full page gets it in its last section', () => {
  assert.deepEqual(templateContent(input()), input().page.content);
  const withContext = input({ version: { ...input().version, supplementaryContext: '  Offer  ' } });
  assert.deepEqual(templateContent(withContext).sections.at(-1), { heading: '', body: 'Offer' });
  assert.equal(templateContent(withContext).headline, 'H {{ person.name }}');
  const full = input({
    page: {
      ...input().page,
      content: { headline: 'H', subheadline: '', sections: Array.from({ length: 50 }, () => ({ heading: 'h', body: 'b' })) },
    },
    version: { ...input().version, supplementaryContext: 'Offer' },
  });
  const out = templateContent(full);
  assert.equal(out.sections.length, 50);
  assert.equal(out.sections.at(-1)?.body, 'b\n\nOffer');
});

test('configuration: defaults, bounds, and the openai settings checked once at start', () => {
  const base = { DATABASE_URL: 'sqlite:/tmp/x.sqlite' };
  const agent = loadConfig(base).agent;
  assert.deepEqual(agent, {
    enabled: true,
    concurrency: 4,
    generator: 'template',
    timeoutMs: 60_000,
    maxPromptChars: 48_000,
    openai: undefined,
  });
  assert.equal(loadConfig({ ...base, AGENT: 'false' }).agent.enabled, false);
  assert.equal(loadConfig({ ...base, AGENT_CONCURRENCY: '1000' }).agent.concurrency, 1000);
  for (const [name, value] of [
    ['AGENT_CONCURRENCY', '0'],
    ['AGENT_CONCURRENCY', '1001'],
    ['AGENT_GENERATOR', 'gpt'],
    ['AGENT', 'maybe'],
    ['AGENT_TIMEOUT_MS', '99'],
    ['AGENT_MAX_PROMPT_CHARS', '3999'],
  ] as const) {
    assert.throws(
      () => loadConfig({ ...base, [name]: value }),
      (err: Error) => err instanceof ConfigError && err.message.includes(name),
    );
  }
  assert.throws(() => loadConfig({ ...base, AGENT_GENERATOR: 'openai' }), /AGENT_OPENAI_MODEL/);
  const openai = loadConfig({
    ...base,
    AGENT_GENERATOR: 'openai',
    AGENT_OPENAI_MODEL: 'm',
    AGENT_OPENAI_BASE_URL: 'http://localhost:11434/v1/',
  }).agent;
  assert.deepEqual(openai.openai, { baseUrl: 'http://localhost:11434/v1', apiKey: undefined, model: 'm' });
  assert.throws(
    () => loadConfig({ ...base, AGENT_GENERATOR: 'openai', AGENT_OPENAI_MODEL: 'm', AGENT_OPENAI_API_KEY: 'sk secret' }),
    (err: Error) => err instanceof ConfigError && !err.message.includes('sk secret'),
  );
  assert.throws(
    () => loadConfig({ ...base, AGENT_GENERATOR: 'openai', AGENT_OPENAI_MODEL: 'm', AGENT_OPENAI_BASE_URL: 'ftp://x' }),
    /AGENT_OPENAI_BASE_URL/,
  );
});
