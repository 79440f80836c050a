/**
 * When a CRM request is tried again, decided without a clock so each rule is tested alone:
 * - 429 and 5xx, and no answer at all, are retried, up to `MAX_ATTEMPTS` in all;
 * - a `Retry-After` (seconds, or an HTTP date) is waited for as asked, up to `MAX_WAIT_MS`;
 *   past that the sync gives up for this round, and the next round starts where it stopped;
 * - otherwise the wait doubles from `BASE_MS`, up to 20% later so that retries spread out;
 * - anything else (2xx, another 4xx) is final.
 */
export const MAX_ATTEMPTS = 4;
export const BASE_MS = 500;
export const MAX_WAIT_MS = 30_000;

export interface RetryInput {
  /** Attempts made, this one included. */
  attempts: number;
  /** The answer's status; undefined when there was none (network error, timeout). */
  status: number | undefined;
  retryAfter: string | undefined;
  /** Epoch milliseconds, for a Retry-After given as a date. */
  now: number;
  /** Uniform in [0, 1). */
  random: number;
}

/** Milliseconds to wait before the next attempt, or undefined: do not retry. */
export function retryDelay({ attempts, status, retryAfter, now, random }: RetryInput): number | undefined {
  const retryable = status === undefined || status === 429 || status >= 500;
  if (!retryable || attempts >= MAX_ATTEMPTS) return undefined;
  const asked = retryAfterMs(retryAfter, now);
  if (asked !== undefined) return asked > MAX_WAIT_MS ? undefined : asked;
  return BASE_MS * 2 ** (attempts - 1) * (1 + random * 0.2);
}

export function retryAfterMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d{1,9}$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
