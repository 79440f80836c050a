import type { SendResult } from './send.js';

/**
 * What an attempt's result means for its delivery and its subscription, decided without a clock
 * or a database so every rule is tested alone:
 *
 * - any 2xx: succeeded (and the subscription is no longer failing);
 * - 410 Gone: failed, not retried, and the subscription is disabled at once;
 * - anything else (another status, no answer): retried after the next delay of the schedule, up
 *   to 20% later so that many retries spread out, or when a 429 or 503 says in Retry-After;
 *   failed once the schedule has run out. Either way the subscription is failing, and one that
 *   has been failing for 5 days straight is disabled (`failingTooLong`).
 */
export interface AttemptInput {
  /** Attempts made before this one. */
  attempts: number;
  /** Delays before each retry, in milliseconds: the first retry waits `schedule[0]`. */
  schedule: readonly number[];
  result: SendResult;
  /** The time of the outcome, in epoch milliseconds. */
  now: number;
  /** Uniform in [0, 1): where in the 0-20% of jitter this retry lands. */
  random: number;
}

export interface AttemptOutcome {
  status: 'succeeded' | 'pending' | 'failed';
  attempts: number;
  lastError: string | null;
  /** When to try again; null unless pending. */
  nextAttemptAt: string | null;
  /** Milliseconds from `now` to `nextAttemptAt`; null unless pending. */
  retryInMs: number | null;
  /** What the outcome says about the subscription. */
  subscription: 'healthy' | 'failing' | 'gone';
}

export const DISABLE_AFTER_MS = 5 * 24 * 60 * 60 * 1000;

export function nextAttempt({ attempts: before, schedule, result, now, random }: AttemptInput): AttemptOutcome {
  const attempts = before + 1;
  if (result.status !== undefined && result.status >= 200 && result.status < 300) {
    return { status: 'succeeded', attempts, lastError: null, nextAttemptAt: null, retryInMs: null, subscription: 'healthy' };
  }
  if (result.status === 410) {
    // The receiver says the endpoint is gone for good.
    const lastError = 'HTTP 410: the subscription was disabled';
    return { status: 'failed', attempts, lastError, nextAttemptAt: null, retryInMs: null, subscription: 'gone' };
  }
  const lastError = result.error ?? `HTTP ${result.status}`;
  const delay = schedule[attempts - 1];
  if (delay === undefined) return { status: 'failed', attempts, lastError, nextAttemptAt: null, retryInMs: null, subscription: 'failing' };
  const asked = result.status === 429 || result.status === 503 ? result.retryAfterMs : undefined;
  const retryInMs = asked ?? delay * (1 + random * 0.2);
  const nextAttemptAt = new Date(now + retryInMs).toISOString();
  return { status: 'pending', attempts, lastError, nextAttemptAt, retryInMs, subscription: 'failing' };
}

/** A subscription whose every delivery has failed since `failingSince` is disabled once that is 5 days ago. */
export function failingTooLong(failingSince: string, now: string): boolean {
  return Date.parse(now) - Date.parse(failingSince) >= DISABLE_AFTER_MS;
}
