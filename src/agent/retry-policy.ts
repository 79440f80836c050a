/** A failed generation is tried again up to this many times; then the version is cancelled. */
export const MAX_RETRIES = 3;
/** A Retry-After longer than this is not waited for: the try after it is scheduled at this. */
const MAX_WAIT_MS = 10 * 60_000;

export interface Failure {
  /** Failed tries so far, this one included. */
  failures: number;
  /** The first retry's base delay; each later one doubles it. */
  baseMs: number;
  /** What the endpoint asked for (Retry-After), if anything. */
  retryAfterMs?: number | undefined;
  /** In [0, 1): the jitter. */
  random: number;
}

/**
 * When to try again, in ms from now, or null to give up. Exponential with jitter (half to all of
 * base × 2^(n-1)), and never sooner than the endpoint's Retry-After.
 */
export function retryIn({ failures, baseMs, retryAfterMs, random }: Failure): number | null {
  if (failures > MAX_RETRIES) return null;
  const backoff = baseMs * 2 ** (failures - 1) * (0.5 + random / 2);
  return Math.round(Math.min(MAX_WAIT_MS, Math.max(backoff, retryAfterMs ?? 0)));
}

/** Retry-After as seconds or an HTTP date, in ms from `nowMs`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
