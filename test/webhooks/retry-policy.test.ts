// Runs once (scripts/test.mjs): it reaches no database.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DISABLE_AFTER_MS, failingTooLong, nextAttempt, type AttemptInput } from '../../src/events/retry-policy.js';

// The retry and back-off policy alone: no clock, no database, no receiver.

const NOW = Date.parse('2026-11-22T12:00:00.000Z');
const SCHEDULE = [5_000, 300_000, 1_800_000];
const at = (ms: number) => new Date(NOW + ms).toISOString();
const input = (over: Partial<AttemptInput>): AttemptInput => ({
  attempts: 0,
  schedule: SCHEDULE,
  result: {},
  now: NOW,
  random: 0,
  ...over,
});

describe('nextAttempt', () => {
  test('any 2xx succeeds: no retry, no error, the subscription is healthy', () => {
    for (const status of [200, 201, 204, 299]) {
      assert.deepEqual(nextAttempt(input({ attempts: 2, result: { status } })), {
        status: 'succeeded',
        attempts: 3,
        lastError: null,
        nextAttemptAt: null,
        retryInMs: null,
        subscription: 'healthy',
      });
    }
  });

  test('410 fails at once, with schedule left, and the subscription is gone', () => {
    assert.deepEqual(nextAttempt(input({ result: { status: 410 } })), {
      status: 'failed',
      attempts: 1,
      lastError: 'HTTP 410: the subscription was disabled',
      nextAttemptAt: null,
      retryInMs: null,
      subscription: 'gone',
    });
  });

  test('a failure with schedule left is retried after the delay for this attempt', () => {
    for (const [attempts, delay] of SCHEDULE.entries()) {
      const outcome = nextAttempt(input({ attempts, result: { status: 500 } }));
      assert.deepEqual(outcome, {
        status: 'pending',
        attempts: attempts + 1,
        lastError: 'HTTP 500',
        nextAttemptAt: at(delay),
        retryInMs: delay,
        subscription: 'failing',
      });
    }
  });

  test('jitter: the delay is stretched by 0 to 20%, as random says', () => {
    assert.equal(nextAttempt(input({ result: { status: 500 }, random: 0 })).retryInMs, 5_000);
    assert.equal(nextAttempt(input({ result: { status: 500 }, random: 0.5 })).retryInMs, 5_500);
    const most = nextAttempt(input({ result: { status: 500 }, random: 0.999999 })).retryInMs ?? 0;
    assert.ok(most > 5_999 && most < 6_000, String(most));
  });

  test('the schedule run out: failed, the error kept, the subscription failing', () => {
    assert.deepEqual(nextAttempt(input({ attempts: SCHEDULE.length, result: { status: 500 } })), {
      status: 'failed',
      attempts: SCHEDULE.length + 1,
      lastError: 'HTTP 500',
      nextAttemptAt: null,
      retryInMs: null,
      subscription: 'failing',
    });
    assert.equal(nextAttempt(input({ schedule: [], result: { status: 500 } })).status, 'failed', 'an empty schedule never retries');
  });

  test('no answer: the error of the send is the last error', () => {
    const outcome = nextAttempt(input({ result: { error: 'no answer within 15000 ms' } }));
    assert.equal(outcome.status, 'pending');
    assert.equal(outcome.lastError, 'no answer within 15000 ms');
    assert.equal(outcome.subscription, 'failing');
  });

  test('429 and 503 with Retry-After are retried when it says, without jitter', () => {
    for (const status of [429, 503]) {
      const outcome = nextAttempt(input({ result: { status, retryAfterMs: 120_000 }, random: 0.5 }));
      assert.equal(outcome.status, 'pending');
      assert.equal(outcome.retryInMs, 120_000);
      assert.equal(outcome.nextAttemptAt, at(120_000));
      assert.equal(outcome.lastError, `HTTP ${status}`);
    }
    assert.equal(nextAttempt(input({ result: { status: 503, retryAfterMs: 0 } })).retryInMs, 0, 'Retry-After: 0 is now');
  });

  test('Retry-After is ignored on other statuses, and 429 without it follows the schedule', () => {
    assert.equal(nextAttempt(input({ result: { status: 500, retryAfterMs: 120_000 } })).retryInMs, 5_000);
    assert.equal(nextAttempt(input({ result: { status: 429 } })).retryInMs, 5_000);
  });

  test('Retry-After does not extend a schedule that has run out', () => {
    const outcome = nextAttempt(input({ attempts: SCHEDULE.length, result: { status: 429, retryAfterMs: 1_000 } }));
    assert.equal(outcome.status, 'failed');
    assert.equal(outcome.nextAttemptAt, null);
  });

  test('a redirect is a failure like any other status', () => {
    const outcome = nextAttempt(input({ result: { status: 302 } }));
    assert.equal(outcome.status, 'pending');
    assert.equal(outcome.lastError, 'HTTP 302');
  });
});

describe('failingTooLong', () => {
  test('a subscription failing for 5 days straight is disabled; a moment less is not', () => {
    assert.equal(DISABLE_AFTER_MS, 5 * 24 * 60 * 60 * 1000);
    assert.equal(failingTooLong(at(-DISABLE_AFTER_MS), at(0)), true);
    assert.equal(failingTooLong(at(-DISABLE_AFTER_MS - 1), at(0)), true);
    assert.equal(failingTooLong(at(-DISABLE_AFTER_MS + 1), at(0)), false);
    assert.equal(failingTooLong(at(0), at(0)), false);
  });
});
