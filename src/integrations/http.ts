import { retryDelay } from './retry-policy.js';

/**
 * One CRM call: JSON (or a form) in, JSON out, retried by retry-policy.ts. A refusal of the
 * credentials (401) is a `CrmError` with `refused`, which pauses the integration; any other
 * failure is a `CrmError` that lands in `lastError` and is tried again next round.
 */
export class CrmError extends Error {
  override name = 'CrmError';
  constructor(
    message: string,
    readonly status: number | undefined,
    readonly refused = false,
  ) {
    super(message);
  }
}

export interface CrmRequest {
  method: 'GET' | 'POST' | 'PATCH';
  url: string;
  bearer?: string;
  json?: unknown;
  form?: Record<string, string>;
}

export interface CrmResponse {
  status: number;
  body: unknown;
}

const TIMEOUT_MS = 20_000;
const MAX_BODY = 8 * 1024 * 1024;

export type Sleep = (ms: number) => Promise<void>;
const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** What a CRM's error answer says, short: never the credentials, which are not in an answer anyway. */
function describe(provider: string, status: number, body: unknown): string {
  const record = (Array.isArray(body) ? body[0] : body) as Record<string, unknown> | undefined;
  // OAuth errors say `error` (a code) and `error_description`; the CRMs' own, `message`.
  const said = [record?.error, record?.error_description ?? record?.message].filter((s): s is string => typeof s === 'string').join(': ');
  const detail = said === '' ? '' : `: ${said.slice(0, 300)}`;
  return `${provider} answered HTTP ${status}${detail}`;
}

/** The sync was stopped (its lease lost or ending, sync/hold.ts): no further call, no retry. */
function stopIfAborted(provider: string, signal: AbortSignal | undefined): void {
  if (!signal?.aborted) return;
  const reason = signal.reason instanceof Error ? signal.reason.message : 'the sync was stopped';
  throw new CrmError(`${provider} sync stopped: ${reason}`, undefined);
}

/** `sleep`, cut short when `signal` aborts. */
async function wait(sleep: Sleep, ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return sleep(ms);
  let stop: (() => void) | undefined;
  const aborted = new Promise<void>((resolve) => {
    stop = resolve;
    signal.addEventListener('abort', stop, { once: true });
  });
  await Promise.race([sleep(ms), aborted]);
  if (stop) signal.removeEventListener('abort', stop);
}

export async function crmCall(provider: string, request: CrmRequest, sleep: Sleep = realSleep, signal?: AbortSignal): Promise<CrmResponse> {
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'page-audience-api-integrations/1' };
  if (request.bearer !== undefined) headers.authorization = `Bearer ${request.bearer}`;
  let body: string | undefined;
  if (request.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(request.json);
  } else if (request.form !== undefined) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(request.form).toString();
  }
  for (let attempts = 1; ; attempts++) {
    stopIfAborted(provider, signal);
    let status: number | undefined;
    let retryAfter: string | undefined;
    let parsed: unknown;
    let failure: string | undefined;
    try {
      const res = await fetch(request.url, {
        method: request.method,
        headers,
        ...(body === undefined ? {} : { body }),
        redirect: 'error',
        signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(TIMEOUT_MS)]) : AbortSignal.timeout(TIMEOUT_MS),
      });
      status = res.status;
      retryAfter = res.headers.get('retry-after') ?? undefined;
      const text = await res.text();
      if (text.length > MAX_BODY) throw new Error('the answer is too large');
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch (err) {
      stopIfAborted(provider, signal);
      failure = err instanceof Error ? err.message : String(err);
      // An answer that is not JSON still has a status; only no answer at all is a network failure.
      if (status !== undefined && status >= 200 && status < 300)
        throw new CrmError(`${provider} sent an unreadable answer: ${failure}`, status);
    }
    if (status !== undefined && status >= 200 && status < 300) return { status, body: parsed };
    if (status === 401) throw new CrmError(describe(provider, status, parsed), status, true);
    const delay = retryDelay({ attempts, status, retryAfter, now: Date.now(), random: Math.random() });
    if (delay === undefined) {
      throw new CrmError(
        status === undefined ? `${provider} could not be reached: ${failure}` : describe(provider, status, parsed),
        status,
      );
    }
    await wait(sleep, delay, signal);
  }
}
