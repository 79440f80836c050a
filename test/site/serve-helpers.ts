import type { Json, TestApp } from '../helpers.js';

/** A visitor request to a tenant domain. */
export async function visit(
  t: TestApp,
  host: string,
  url: string,
  init: { method?: string; headers?: Record<string, string>; payload?: string; remoteAddress?: string } = {},
) {
  return t.app.inject({
    method: (init.method ?? 'GET') as 'GET',
    url,
    headers: { host, ...init.headers },
    ...(init.payload !== undefined ? { payload: init.payload } : {}),
    ...(init.remoteAddress !== undefined ? { remoteAddress: init.remoteAddress } : {}),
  });
}

export async function fallbackHost(t: TestApp, key?: string): Promise<string> {
  const domains = (await t.req('GET', '/v0/tenant_domains', undefined, key ? { key } : {})).body.items as Json[];
  return domains.find((d) => d.isFallback).hostname;
}

let n = 0;
/** A published page with the fields the tests read, overridden by `fields`. */
export async function publishedPage(t: TestApp, fields: Record<string, unknown> = {}, key?: string): Promise<Json> {
  n++;
  const res = await t.req(
    'POST',
    '/v0/pages',
    { name: `Page ${n}`, title: `Title ${n}`, pageContext: 'ctx', pageType: 'inbound', status: 'published', ...fields },
    key ? { key } : {},
  );
  if (res.status !== 201) throw new Error(`page: ${res.status} ${res.text}`);
  return res.body;
}

export async function audienceOf(t: TestApp, pageId: string, fields: Record<string, unknown> = {}, key?: string): Promise<Json> {
  const res = await t.req('POST', `/v0/pages/${pageId}/audiences`, fields, key ? { key } : {});
  if (res.status !== 201) throw new Error(`audience: ${res.status} ${res.text}`);
  return res.body;
}

export async function link(t: TestApp, path: string, target: Record<string, string>, key?: string): Promise<Json> {
  const res = await t.req('POST', '/v0/page_links', { path, target }, key ? { key } : {});
  if (res.status !== 201) throw new Error(`link: ${res.status} ${res.text}`);
  return res.body;
}

export const unique = (prefix: string) => `/${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 7)}`;

/** The claims of a view token, read without checking its signature (the service checks it). */
export const viewClaims = (token: string): Json => JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('utf8'));

/** The view token a served document carries in its measurement script. */
export const tokenIn = (html: string): string => /"token":"([^"]+)"/.exec(html)?.[1] ?? '';
