import type { Json } from '../helpers.js';

// A tiny HTTP client for the process-level robustness tests: real sockets to a real server process.

export interface Answer {
  status: number;
  headers: Headers;
  /** The parsed JSON body (undefined when there is none or it is not JSON). */
  body: Json;
  text: string;
  /** Milliseconds from sending the request to reading the whole answer. */
  ms: number;
}

export interface CallOptions {
  /** Abort the request after this long (the promise rejects). */
  timeoutMs?: number;
  headers?: Record<string, string>;
}

/** One request with the API key; rejects only when no HTTP answer arrived (connection refused, reset, timeout). */
export async function call(
  base: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
  opts: CallOptions = {},
): Promise<Answer> {
  const started = performance.now();
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...opts.headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    ...(opts.timeoutMs !== undefined ? { signal: AbortSignal.timeout(opts.timeoutMs) } : {}),
  });
  const text = await res.text();
  let parsed: Json;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text, ms: performance.now() - started };
}

/** Status, code and text of an answer, for assertion messages. */
export const show = (a: Answer): string => `${a.status} ${a.text.slice(0, 300)}`;

export interface Walked {
  items: Json[];
  /** The totalCount of every page, in order. */
  totalCounts: number[];
  pages: number;
}

/** Every item of a list, page by page (limit 100), following nextCursor until hasMore is false. */
export async function walk(base: string, key: string, path: string): Promise<Walked> {
  const items: Json[] = [];
  const totalCounts: number[] = [];
  let cursor: string | null = null;
  let pages = 0;
  const sep = path.includes('?') ? '&' : '?';
  for (;;) {
    const res = await call(base, key, 'GET', `${path}${sep}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    if (res.status !== 200) throw new Error(`GET ${path} (page ${pages + 1}): ${show(res)}`);
    pages++;
    items.push(...res.body.items);
    totalCounts.push(res.body.totalCount);
    if (!res.body.hasMore) {
      if (res.body.nextCursor !== null) throw new Error(`GET ${path}: hasMore false with a nextCursor`);
      return { items, totalCounts, pages };
    }
    cursor = res.body.nextCursor;
    if (typeof cursor !== 'string') throw new Error(`GET ${path}: hasMore true without a nextCursor`);
    if (pages > 1000) throw new Error(`GET ${path}: more than 1000 pages`);
  }
}

export async function waitFor(
  what: string,
  timeoutMs: number,
  check: () => boolean | Promise<boolean>,
  detail: () => string = () => '',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail() ? `: ${detail()}` : ''}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
