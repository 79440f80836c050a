import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ok, type Json, type TestApp } from '../helpers.js';
import { audienceOf, fallbackHost, link, publishedPage, unique, visit } from '../site/serve-helpers.js';

/** A request as the fake CRM received it. */
export interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: Json;
  text: string;
}

export interface Answer {
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
}

/**
 * A CRM played by a node:http server: each request is recorded, then answered by `handle`, which
 * the test sets. A request nobody expected answers 404, and the test sees it in `seen`.
 */
export interface FakeCrm {
  url: string;
  seen: Seen[];
  /** An answer, or a promise of one: a test may hold a request to see what happens meanwhile. */
  handle: (request: Seen) => Answer | undefined | Promise<Answer | undefined>;
  close(): Promise<void>;
}

export async function fakeCrm(): Promise<FakeCrm> {
  const fake: FakeCrm = { url: '', seen: [], handle: () => undefined, close: async () => {} };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', 'http://crm.test');
      let body: Json;
      try {
        body = String(req.headers['content-type']).startsWith('application/json') ? JSON.parse(text) : text;
      } catch {
        body = text;
      }
      const seen: Seen = { method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers, body, text };
      fake.seen.push(seen);
      const answer = (await fake.handle(seen)) ?? { status: 404, body: { message: `unexpected ${seen.method} ${seen.path}` } };
      const payload = answer.body === undefined ? '' : JSON.stringify(answer.body);
      res.writeHead(answer.status ?? 200, { ...(payload ? { 'content-type': 'application/json' } : {}), ...answer.headers });
      res.end(payload);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () => new Promise((resolve) => server.close(() => resolve()));
  return fake;
}

/** Waits until the integration's GET satisfies `done` (the background sync ran). */
export async function until(t: TestApp, integrationId: string, done: (i: Json) => boolean, ms = 15_000): Promise<Json> {
  const end = Date.now() + ms;
  for (;;) {
    const integration = ok(await t.req('GET', `/v0/integrations/${integrationId}`));
    if (done(integration)) return integration;
    if (Date.now() > end) assert.fail(`the sync did not finish: ${JSON.stringify(integration)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Runs a sync now and waits for its end: `lastSyncAt` or `lastErrorAt` moves past what it was. */
export async function syncNow(t: TestApp, integrationId: string): Promise<Json> {
  const before = ok(await t.req('GET', `/v0/integrations/${integrationId}`));
  const mark = (i: Json) => `${i.lastSyncAt}|${i.lastErrorAt}|${i.status}`;
  ok(await t.req('POST', `/v0/integrations/${integrationId}/sync`), 202);
  return until(t, integrationId, (i) => mark(i) !== mark(before));
}

const FORM_ACTION = { purpose: 'lead', buttonTitle: 'Send', actionType: 'form', url: '' };
let address = 1;

/** A lead through a page's form, as a visitor posts it (with `Sec-GPC: 1` when `gpc`). */
export async function postLead(t: TestApp, fields: Record<string, string>, gpc = false): Promise<void> {
  const host = await fallbackHost(t);
  const page = await publishedPage(t, { actions: [FORM_ACTION] });
  const audience = await audienceOf(t, page.pageId);
  const path = unique('crm');
  await link(t, path, { targetType: 'audience', audienceId: audience.audienceId });
  const html = (await visit(t, host, path)).body as string;
  const hidden = (name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html)?.[1] ?? '';
  const n = address++;
  const res = await visit(t, host, '/_pam/forms', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(gpc ? { 'sec-gpc': '1' } : {}) },
    payload: new URLSearchParams({ token: hidden('token'), action: hidden('action'), path: hidden('path'), ...fields }).toString(),
    remoteAddress: `198.51.100.${n}`,
  });
  assert.equal(res.statusCode, 303, res.body);
}

export const events = async (t: TestApp, type: string) => ok(await t.req('GET', `/v0/events?type=${type}&limit=100`)).items as Json[];
