export interface RetryOptions {
  /** Further attempts after the first; 0 turns retries off. */
  retries: number;
  /** A wait the service asks for beyond this is not waited: the 429 or 503 is raised instead. */
  maxDelayMs: number;
}

const RETRIED_STATUSES = new Set([429, 503]);
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/**
 * Only a request that the service may receive twice without harm is retried: an idempotent method,
 * or a POST carrying an `Idempotency-Key` (the service replays the first answer to a retry).
 */
export function isRetryable(request: Request): boolean {
  return IDEMPOTENT_METHODS.has(request.method) || (request.method === 'POST' && request.headers.has('idempotency-key'));
}

/**
 * `Retry-After` in seconds or as an HTTP date; without one, a growing, jittered back-off
 * (0.5 s, 1 s, 2 s...) so that many clients refused at once do not come back at once.
 */
export function retryDelayMs(retryAfter: string | null, attempt: number, now = Date.now()): number {
  if (retryAfter !== null) {
    const value = retryAfter.trim();
    if (/^\d+$/.test(value)) return Number(value) * 1000;
    const date = Date.parse(value);
    if (!Number.isNaN(date)) return Math.max(0, date - now);
  }
  const base = 500 * 2 ** attempt;
  return base / 2 + Math.random() * (base / 2);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A fetch that answers 429 and 503 by waiting as told and trying again, for retryable requests only. */
export function fetchWithRetries(fetchOnce: (request: Request) => Promise<Response>, options: RetryOptions) {
  return async (request: Request): Promise<Response> => {
    const retryable = options.retries > 0 && isRetryable(request);
    for (let attempt = 0; ; attempt++) {
      const last = !retryable || attempt >= options.retries;
      // A request's body can be sent once: every attempt but the last sends a copy.
      const response = await fetchOnce(last ? request : request.clone());
      if (last || !RETRIED_STATUSES.has(response.status)) return response;
      const delay = retryDelayMs(response.headers.get('retry-after'), attempt);
      if (delay > options.maxDelayMs) return response;
      await response.body?.cancel();
      await sleep(delay);
    }
  };
}
