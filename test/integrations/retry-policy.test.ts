// Runs once (scripts/test.mjs): it reaches no database.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BASE_MS, MAX_ATTEMPTS, MAX_WAIT_MS, retryAfterMs, retryDelay } from '../../src/integrations/retry-policy.js';

const at = Date.parse('2026-11-27T12:00:00Z');
const input = { attempts: 1, retryAfter: undefined, now: at, random: 0 };

test('429, 5xx and no answer are retried; other statuses are final', () => {
  assert.equal(retryDelay({ ...input, status: 429 }), BASE_MS);
  assert.equal(retryDelay({ ...input, status: 500 }), BASE_MS);
  assert.equal(retryDelay({ ...input, status: undefined }), BASE_MS);
  assert.equal(retryDelay({ ...input, status: 400 }), undefined);
  assert.equal(retryDelay({ ...input, status: 403 }), undefined);
  assert.equal(retryDelay({ ...input, status: 499 }), undefined);
});

test('the wait doubles, with up to 20% more, and stops after the last attempt', () => {
  assert.equal(retryDelay({ ...input, attempts: 2, status: 503 }), BASE_MS * 2);
  assert.equal(retryDelay({ ...input, attempts: 3, status: 503, random: 0.999 }), BASE_MS * 4 * 1.1998);
  assert.equal(retryDelay({ ...input, attempts: MAX_ATTEMPTS - 1, status: 503 }) !== undefined, true);
  assert.equal(retryDelay({ ...input, attempts: MAX_ATTEMPTS, status: 503 }), undefined);
});

test('Retry-After in seconds or as a date is waited for, up to the bound', () => {
  assert.equal(retryDelay({ ...input, status: 429, retryAfter: '3' }), 3000);
  assert.equal(retryDelay({ ...input, status: 429, retryAfter: String(MAX_WAIT_MS / 1000) }), MAX_WAIT_MS);
  assert.equal(retryDelay({ ...input, status: 429, retryAfter: String(MAX_WAIT_MS / 1000 + 1) }), undefined);
  assert.equal(retryAfterMs('Fri, 27 Nov 2026 12:00:05 GMT', at), 5000);
  assert.equal(retryAfterMs('Fri, 27 Nov 2026 11:00:00 GMT', at), 0);
  assert.equal(retryAfterMs('soon', at), undefined);
  assert.equal(retryDelay({ ...input, status: 429, retryAfter: 'soon' }), BASE_MS);
});
