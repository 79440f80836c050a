/**
 * Contract fuzzing from the service's own OpenAPI document.
 *
 * The document (GET /openapi.json) is read from the running app; every operation in it becomes
 * two fast-check arbitraries:
 *
 * - VALID requests: bodies and query values generated from the JSON schemas (objects with their
 *   required and optional properties, strings with their lengths, patterns, formats and enums,
 *   numbers with their bounds, arrays with their sizes and uniqueness, nullable types), path
 *   parameters filled with the ids of real resources made in a fixture step. The property: never a
 *   5xx; a 2xx is a declared status and its body validates against the declared schema (ajv); a
 *   4xx (a business rule: a duplicate, a reference to nothing, ...) is problem+json.
 * - INVALID requests: a valid request with one thing broken (a wrong type, a number out of range or
 *   beyond 2^53 or 1e400, an overlong string, a missing required field, an unknown field, broken
 *   JSON, odd Unicode, a foreign media type, a bad path segment, a bad credential). The property:
 *   a 4xx problem+json with code, status and requestId; never a 5xx; never a hang.
 *
 * Where a schema alone cannot say what a working value is (a webhook URL the service may call, a
 * unique hostname, a reference to a resource of the tenant), a small table of hints adds values
 * that work, mixed with the schema's own.
 */
import { USER_AGENT } from '../browser.js';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import fc from 'fast-check';
import { IMAGE_MIME, makeImage, type ImageFormat } from '../fixtures.js';
import { ADMIN_TOKEN, toRes, type Json, type Res, type TestApp } from '../helpers.js';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

export type Schema = Json;
export type Kind = 'valid' | 'invalid';

/** The default seed of `npm test`; FUZZ_SEED (or `npm run fuzz -- --seed N`) overrides it. */
export const DEFAULT_SEED = 20261122;

/** How long one request may take before it counts as a hang. */
export const REQUEST_TIMEOUT_MS = 10_000;

/**
 * The app's settings for fuzzing: webhooks may go to the local receiver over http (deliveries
 * finish within milliseconds), and failed ones are not retried for long.
 */
export function fuzzEnv(): Record<string, string> {
  return {
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_RETRY_SCHEDULE: '0.05',
    WEBHOOK_TIMEOUT_MS: '2000',
  };
}

// =============================================================================================
// The document

export interface Param {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  schema: Schema;
}

export type Auth = { kind: 'apiKey'; header: string } | { kind: 'bearer' } | { kind: 'none' };

export interface Operation {
  /** `METHOD /path/{template}` */
  key: string;
  method: string;
  path: string;
  raw: Json;
  pathParams: Param[];
  queryParams: Param[];
  body: { schema: Schema; required: boolean } | undefined;
  /** Declared 2xx statuses → their application/json schema (undefined: no content). */
  success: Map<number, Schema | undefined>;
  /** Declared 2xx statuses whose content is an HTML document (a page preview). */
  html: Set<number>;
  /** The declared 4XX problem schema. */
  problem: Schema | undefined;
  auth: Auth;
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'];

export async function loadDocument(t: TestApp): Promise<Json> {
  const res = await t.req('GET', '/openapi.json', undefined, { key: null });
  if (res.status !== 200 || typeof res.body?.paths !== 'object')
    throw new Error(`GET /openapi.json: ${res.status} ${res.text.slice(0, 300)}`);
  return res.body;
}

/** Inlines every local `$ref` (`#/...`), so each schema stands alone. */
export function inlineRefs(doc: Json): Json {
  const resolve = (ref: string): Json =>
    ref
      .slice(2)
      .split('/')
      .reduce((node: Json, part: string) => node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  const walk = (node: Json, seen: string[]): Json => {
    if (Array.isArray(node)) return node.map((n) => walk(n, seen));
    if (node === null || typeof node !== 'object') return node;
    if (typeof node.$ref === 'string' && node.$ref.startsWith('#/')) {
      if (seen.includes(node.$ref)) throw new Error(`recursive $ref ${node.$ref} is not supported by the fuzzer`);
      const target = resolve(node.$ref);
      if (target === undefined) throw new Error(`dangling $ref ${node.$ref}`);
      return walk(target, [...seen, node.$ref]);
    }
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v, seen)]));
  };
  return walk(doc, []);
}

export function operationsOf(document: Json): Operation[] {
  const doc = inlineRefs(document);
  const schemes = (doc.components?.securitySchemes ?? {}) as Record<string, Json>;
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const method of HTTP_METHODS) {
      const raw = item[method];
      if (!raw) continue;
      const params = [...((item.parameters ?? []) as Json[]), ...((raw.parameters ?? []) as Json[])];
      const toParam = (p: Json): Param => ({ name: p.name, in: p.in, required: p.required === true, schema: p.schema ?? {} });
      const json = raw.requestBody?.content?.['application/json'];
      const success = new Map<number, Schema | undefined>();
      const html = new Set<number>();
      for (const [status, response] of Object.entries((raw.responses ?? {}) as Record<string, Json>)) {
        if (/^2\d\d$/.test(status)) success.set(Number(status), response?.content?.['application/json']?.schema);
        if (/^2\d\d$/.test(status) && response?.content?.['text/html']) html.add(Number(status));
      }
      const problemResponse = raw.responses?.['4XX'] ?? raw.responses?.['4xx'];
      const security = (raw.security ?? doc.security ?? []) as Json[];
      let auth: Auth = { kind: 'none' };
      const scheme = security.length > 0 ? schemes[Object.keys(security[0])[0] ?? ''] : undefined;
      if (scheme?.type === 'apiKey' && scheme.in === 'header') auth = { kind: 'apiKey', header: String(scheme.name).toLowerCase() };
      else if (scheme?.type === 'http' && /^bearer$/i.test(scheme.scheme)) auth = { kind: 'bearer' };
      else if (scheme)
        throw new Error(`${method.toUpperCase()} ${path}: security scheme ${JSON.stringify(scheme)} is not supported by the fuzzer`);
      ops.push({
        key: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        raw,
        pathParams: params.filter((p) => p.in === 'path').map(toParam),
        queryParams: params.filter((p) => p.in === 'query').map(toParam),
        body: json?.schema ? { schema: json.schema, required: raw.requestBody.required === true } : undefined,
        success,
        html,
        problem: problemResponse?.content?.['application/problem+json']?.schema,
        auth,
      });
    }
  }
  return ops;
}

/**
 * Operations the fuzzer does not drive, each for a stated reason. Anything else in the document
 * is fuzzed, so a new operation is covered (or this list must be extended on purpose).
 */
export function skipReason(op: Operation): string | undefined {
  if (op.auth.kind === 'none' && /^\/files\//.test(op.path))
    return 'signed download link: the credential is the URL signature, not a tenant key';
  if (op.auth.kind === 'none' && /^\/previews\//.test(op.path))
    return 'signed preview link: the credential is the URL signature, not a tenant key (test/pages/preview-links.test.ts)';
  return undefined;
}

/** Operations whose request is not JSON, and have a generator of their own. */
const RAW_BODY_OPS = new Set(['POST /v0/files']);

// =============================================================================================
// Schemas

const ajv = addFormats(new Ajv({ strict: false, allErrors: true, validateFormats: true }));
const compiled = new WeakMap<object, ValidateFunction>();
const compiledByText = new Map<string, ValidateFunction>();

/** The ajv validator of a schema, compiled once (schemas derived on the fly are equal by text). */
export function validator(schema: Schema): ValidateFunction {
  if (typeof schema !== 'object' || schema === null) return ajv.compile(schema);
  let v = compiled.get(schema);
  if (!v) {
    const text = JSON.stringify(schema);
    v = compiledByText.get(text);
    if (!v) {
      v = ajv.compile(schema);
      compiledByText.set(text, v);
    }
    compiled.set(schema, v);
  }
  return v;
}

export function ajvErrors(v: ValidateFunction): string {
  return (v.errors ?? [])
    .slice(0, 5)
    .map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`)
    .join('; ');
}

function typesOf(schema: Schema): string[] {
  if (Array.isArray(schema?.type)) return schema.type as string[];
  if (typeof schema?.type === 'string') return [schema.type];
  if (schema?.properties) return ['object'];
  return [];
}

/** The schema without its null branch (for `type: [x, "null"]`). */
function withType(schema: Schema, type: string): Schema {
  return { ...schema, type };
}

/**
 * The alternatives of an anyOf/oneOf. Beside a type of its own (an object that needs "at least one
 * of these fields") each branch only narrows the schema: it comes merged into the rest.
 */
function branchesOf(schema: Schema, key: 'anyOf' | 'oneOf'): Schema[] {
  const { [key]: branches, ...rest } = schema;
  if (rest.type === undefined) return branches as Schema[];
  return (branches as Schema[]).map((b) => ({ ...rest, ...b, required: [...(rest.required ?? []), ...(b.required ?? [])] }));
}

/** `[x, "null"]` or an anyOf with a null branch. */
function admitsNull(schema: Schema): boolean {
  return validator(schema)(null);
}

const PROBLEM_FIELDS = ['code', 'status', 'requestId'];

// =============================================================================================
// Text

/** Characters that break naive text handling: zero-width, bidi controls, lone surrogates, NUL, ... */
export const ODD_CHARS = [
  '\u200b',
  '\u200c',
  '\u200d',
  '\u2060',
  '\ufeff', // zero-width
  '\u200e',
  '\u200f',
  '\u202a',
  '\u202b',
  '\u202c',
  '\u202d',
  '\u202e',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069', // bidi
  '\ud800',
  '\udbff',
  '\udc00',
  '\udfff', // lone surrogates (escaped as \ud800 in JSON)
  '\u0000',
  '\u0007',
  '\u001b',
  '\u007f',
  '\u0085',
  '\u00a0',
  '\u2028',
  '\u2029', // controls and odd spaces
  '\u0301',
  '\u0345',
  '\ufffd',
  '\uffff', // combining marks, replacement, non-character
  '😀',
  '👩‍👩‍👧',
  '🇫🇷',
  '𝕏',
  'Ω',
  'é',
  'ß',
  'İ',
  'ﬀ',
  'ǅ',
  '%',
  '\\',
  '"',
  "'",
  '<',
  '&',
];

// Valid texts hold no NUL: the API refuses it in every string (src/http/json-body.ts), and the
// invalid requests below send it.
const oddChar = fc.constantFrom(...ODD_CHARS.filter((c) => c !== '\u0000'));
const textUnit: fc.Arbitrary<string> = fc.oneof(
  { weight: 12, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }).filter((c) => c !== '\u0000') },
  { weight: 2, arbitrary: oddChar },
);

/** Whether a string is well-formed UTF-16 (no lone surrogate): only those can be put in a URL. */
export function wellFormed(s: string): boolean {
  return !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);
}

/** A JSON value written out as given (huge numbers, 1e400): JSON.stringify cannot make these. */
export class RawJson {
  constructor(readonly text: string) {}
}

export function toJsonText(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_k, v: unknown) => (v instanceof RawJson ? `\u0001RAW${raws.push(v.text) - 1}\u0001` : v));
  return text === undefined ? '' : text.replace(/"\\u0001RAW(\d+)\\u0001"/g, (_m, i: string) => raws[Number(i)]!);
}

function clone<T>(value: T): T {
  if (Array.isArray(value)) return value.map(clone) as T;
  if (value === null || typeof value !== 'object' || value instanceof RawJson) return value;
  const out = {};
  for (const [k, v] of Object.entries(value))
    Object.defineProperty(out, k, { value: clone(v), enumerable: true, writable: true, configurable: true });
  return out as T;
}

type Seg = string | number;

function setAt(root: unknown, path: Seg[], value: unknown): unknown {
  if (path.length === 0) return value;
  const copy = clone(root) as Json;
  let node = copy;
  for (const seg of path.slice(0, -1)) node = node[seg];
  Object.defineProperty(node, path[path.length - 1]!, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}

function deleteAt(root: unknown, path: Seg[]): unknown {
  const copy = clone(root) as Json;
  let node = copy;
  for (const seg of path.slice(0, -1)) node = node[seg];
  delete node[path[path.length - 1]!];
  return copy;
}

function pointer(path: Seg[]): string {
  return path.map((s) => `/${s}`).join('');
}

/** Numbers JSON text may hold that no double can: out of range for every schema here. */
function hasNonFinite(value: unknown): boolean {
  if (typeof value === 'number') return !Number.isFinite(value);
  if (Array.isArray(value)) return value.some(hasNonFinite);
  if (value !== null && typeof value === 'object') return Object.values(value).some(hasNonFinite);
  return false;
}

// =============================================================================================
// Fixtures: one of everything, in one tenant

export interface Tenant {
  key: string;
  tenantId: string;
  apiKeyId: string;
}

export interface Fixture {
  tenant: Tenant;
  /** Ids by the name of their field in responses: personId, pageId, actionId, deliveryId, ... */
  ids: Record<string, string>;
  /** A word in the names of this fixture's resources, for searches. */
  marker: string;
  /** Every response body of the fixture step. */
  responses: Json[];
}

export interface Ctx {
  t: TestApp;
  fx: Fixture;
  receiver: Receiver;
  timeoutMs: number;
}

/** A local webhook receiver: answers 204 to everything. */
export interface Receiver {
  url: string;
  hits: number;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const receiver = { url: '', hits: 0, close: async () => {} };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      receiver.hits++;
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

let uniqueCounter = 0;
/** A value no other call in this process returns. */
export function unique(prefix = 'u'): string {
  uniqueCounter++;
  return `${prefix}${process.pid.toString(36)}${uniqueCounter.toString(36)}${Math.floor(Math.random() * 36 ** 4).toString(36)}`;
}

/** A fixture request: it must succeed, and its answer is kept. */
async function api(c: Ctx, method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Json> {
  const res = await c.t.req(method, url, body, { key: c.fx.tenant.key, headers });
  if (res.status < 200 || res.status > 299)
    throw new Error(`fixture ${method} ${url} ${JSON.stringify(body)?.slice(0, 300)} → ${res.status} ${res.text.slice(0, 500)}`);
  if (res.body !== undefined) c.fx.responses.push(res.body);
  return res.body;
}

async function upload(c: Ctx): Promise<Json> {
  const bytes = await makeImage('png', 24, 16, [10, 120, 200]);
  const res = toRes(
    await c.t.app.inject({
      method: 'POST',
      url: '/v0/files',
      headers: { 'x-api-key': c.fx.tenant.key, 'content-type': 'image/png' },
      payload: bytes,
    }),
  );
  if (res.status !== 201) throw new Error(`fixture POST /v0/files → ${res.status} ${res.text.slice(0, 300)}`);
  c.fx.responses.push(res.body);
  return res.body;
}

/** Waits until the delivery is no longer pending (the dispatcher sends it to the local receiver). */
async function settle(c: Ctx, subscriptionId: string, deliveryId: string): Promise<void> {
  const until = Date.now() + 3000;
  while (Date.now() < until) {
    const list = await c.t.req('GET', `/v0/webhook_subscriptions/${subscriptionId}/deliveries?limit=100`, undefined, {
      key: c.fx.tenant.key,
    });
    const delivery = (list.body?.items ?? []).find((d: Json) => d.deliveryId === deliveryId);
    if (delivery && delivery.status !== 'pending') return;
    await new Promise((r) => setTimeout(r, 15));
  }
}

let leadAddress = 0;
/** A lead of a visitor on a published page with a form, served on the tenant's fallback domain: its id (issue 29). */
async function submitLead(c: Ctx): Promise<{ leadId: string; leadPageId: string }> {
  const page = await api(c, 'POST', '/v0/pages', {
    name: `${c.fx.marker} Lead page`,
    title: 'Leads',
    pageContext: 'We sell widgets',
    pageType: 'inbound',
    status: 'published',
    actions: [{ purpose: 'lead', buttonTitle: 'Send', actionType: 'form', url: '' }],
  });
  const audience = await api(c, 'POST', `/v0/pages/${page.pageId}/audiences`, {});
  const path = `/${c.fx.marker}/${unique('lead')}`;
  await api(c, 'POST', '/v0/page_links', { path, target: { targetType: 'audience', audienceId: audience.audienceId } });
  const domains = await api(c, 'GET', '/v0/tenant_domains');
  const host = (domains.items as Json[]).find((d) => d.isFallback).hostname as string;
  const html = (await c.t.app.inject({ method: 'GET', url: path, headers: { host } })).body;
  const hidden = (name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html)?.[1] ?? '';
  const n = ++leadAddress;
  const posted = await c.t.app.inject({
    method: 'POST',
    url: '/_pam/forms',
    headers: { host, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      token: hidden('token'),
      action: hidden('action'),
      path,
      name: `${c.fx.marker} Lead`,
      email: `lead-${n}@${c.fx.marker}.example`,
    }).toString(),
    remoteAddress: `192.0.2.${(n % 250) + 1}`,
  });
  if (posted.statusCode !== 303) throw new Error(`fixture lead form → ${posted.statusCode}`);
  // The visit reports too, so that it is open now: GET /v0/analytics/realtime lists it.
  const view = /<script type="application\/json" id="pam-view">([^<]*)<\/script>/.exec(html)?.[1] ?? '{}';
  const reported = await c.t.app.inject({
    method: 'POST',
    url: '/_pam/collect',
    headers: { host, 'content-type': 'text/plain', 'user-agent': USER_AGENT },
    payload: JSON.stringify({
      token: (JSON.parse(view) as Json).token,
      visibleMs: 1000,
      scroll: 10,
      clicks: 0,
      questions: 0,
      conversions: 0,
    }),
    remoteAddress: `192.0.2.${(n % 250) + 1}`,
  });
  if (reported.statusCode !== 204) throw new Error(`fixture lead visit report → ${reported.statusCode} ${reported.body}`);
  const leads = await api(c, 'GET', `/v0/leads?pageId=${page.pageId}`);
  return { leadId: leads.items[0].leadId as string, leadPageId: page.pageId as string };
}

const PAGE_ACTION = { purpose: 'Book', buttonTitle: 'Book a demo', actionType: 'link', url: 'https://example.com/demo' };

/**
 * Makers of each kind of resource (under the fixture's parents), by the id they yield. The fixture
 * step runs them in this order; a "fresh" path parameter runs one again for a single request.
 */
const MAKERS: [string, (c: Ctx) => Promise<Record<string, string>>][] = [
  [
    'personId',
    async (c) => {
      const p = await api(c, 'POST', '/v0/persons', {
        name: `${c.fx.marker} Person`,
        email: 'ada@example.com',
        domain: 'example.com',
        phoneNumber: '+14155550100',
        linkedinProfileUrl: 'https://linkedin.com/in/ada',
      });
      return { personId: p.personId };
    },
  ],
  [
    'personLogId',
    async (c) => ({
      personLogId: (
        await api(c, 'POST', `/v0/persons/${c.fx.ids.personId}/logs`, { source: 'crm', type: 'note', payload: { text: c.fx.marker } })
      ).personLogId,
    }),
  ],
  [
    'accountId',
    async (c) => ({
      accountId: (
        await api(c, 'POST', '/v0/accounts', { name: `${c.fx.marker} Account`, domain: `${unique('acct')}.${c.fx.marker}.example` })
      ).accountId,
    }),
  ],
  [
    'accountLogId',
    async (c) => ({
      accountLogId: (
        await api(c, 'POST', `/v0/accounts/${c.fx.ids.accountId}/logs`, { source: 'crm', type: 'note', payload: { text: c.fx.marker } })
      ).accountLogId,
    }),
  ],
  [
    'pageId',
    async (c) => {
      const page = await api(c, 'POST', '/v0/pages', {
        name: `${c.fx.marker} Page`,
        title: 'Welcome',
        pageContext: 'We sell widgets',
        pageType: 'inbound',
        actions: [PAGE_ACTION],
      });
      return { pageId: page.pageId, actionId: page.actions[0].actionId };
    },
  ],
  [
    'audienceId',
    async (c) => ({
      audienceId: (
        await api(c, 'POST', `/v0/pages/${c.fx.ids.pageId}/audiences`, {
          customName: `${c.fx.marker} Audience`,
          personId: c.fx.ids.personId,
        })
      ).audienceId,
    }),
  ],
  [
    'versionId',
    async (c) => ({
      versionId:
        // With content of its own, so a restore of it has something to publish.
        (
          await api(c, 'POST', `/v0/pages/${c.fx.ids.pageId}/audiences/${c.fx.ids.audienceId}/versions`, {
            supplementaryContext: c.fx.marker,
            content: { headline: `${c.fx.marker} Headline`, subheadline: '', sections: [{ heading: 'Why', body: 'Because' }] },
          })
        ).versionId,
    }),
  ],
  [
    'audienceSessionId',
    async (c) => {
      // An hour ago: inside the analytics' default range (the last 30 days), so their answers show it.
      const started = Date.now() - 3_600_000;
      const s = await api(c, 'POST', `/v0/pages/${c.fx.ids.pageId}/audience_sessions`, {
        audienceId: c.fx.ids.audienceId,
        analyticsSessionId: `${c.fx.marker}-session`,
        pageUrl: 'https://example.com/p',
        sessionStartedAt: new Date(started).toISOString(),
        sessionEndedAt: new Date(started + 300_000).toISOString(),
        totalClicksCount: 3,
      });
      return { audienceSessionId: s.audienceSessionId };
    },
  ],
  ['fileId', async (c) => ({ fileId: (await upload(c)).fileId })],
  [
    'assetId',
    async (c) => ({
      assetId: (await api(c, 'POST', '/v0/assets', { assetType: 'image', name: `${c.fx.marker} Asset`, fileId: c.fx.ids.fileId })).assetId,
    }),
  ],
  // The tenant's brand names its asset, so B's settings show B's own id (issue 29).
  [
    'siteSettings',
    async (c) => {
      await api(c, 'PATCH', '/v0/site_settings', { logoAssetId: c.fx.ids.assetId, footerText: c.fx.marker });
      return {};
    },
  ],
  ['leadId', async (c) => submitLead(c)],
  ['topicId', async (c) => ({ topicId: (await api(c, 'POST', '/v0/topics', { title: `${c.fx.marker} Topic` })).topicId })],
  [
    'topicEntryId',
    async (c) => ({
      topicEntryId: (await api(c, 'POST', `/v0/topics/${c.fx.ids.topicId}/entries`, { content: { type: 'text', content: c.fx.marker } }))
        .topicEntryId,
    }),
  ],
  [
    'tenantDomainId',
    async (c) => {
      const { tenantDomainId } = await api(c, 'POST', '/v0/tenant_domains', { hostname: `${unique('d')}.${c.fx.marker}.example` });
      // Verified as an operator attests it, so that verifying it again answers 200 without a DNS look-up.
      await api(c, 'POST', `/admin/tenant_domains/${tenantDomainId}/verify`, undefined, { authorization: `Bearer ${ADMIN_TOKEN}` });
      return { tenantDomainId };
    },
  ],
  // An experiment between two versions of an audience of its own (one runs per audience, so each may start).
  ['experimentId', async (c) => ({ experimentId: await versionsExperiment(c, false) })],
  [
    'goalId',
    async (c) => ({
      goalId: (await api(c, 'POST', '/v0/goals', { name: `${c.fx.marker} Goal`, kind: 'event', eventName: 'signup' })).goalId,
    }),
  ],
  [
    'funnelId',
    async (c) => {
      const steps = [
        { name: 'Signed up', kind: 'event', eventName: 'signup' },
        { name: 'Paid', kind: 'event', eventName: 'paid' },
      ];
      return { funnelId: (await api(c, 'POST', '/v0/funnels', { name: `${c.fx.marker} Funnel`, steps })).funnelId };
    },
  ],
  [
    'siteId',
    async (c) => ({
      siteId: (await api(c, 'POST', '/v0/sites', { name: `${c.fx.marker} Site`, origins: ['https://fuzz.example'] })).siteId,
    }),
  ],
  [
    'experienceId',
    async (c) => ({
      experienceId: (
        await api(c, 'POST', '/v0/experiences', {
          siteId: c.fx.ids.siteId,
          name: `${c.fx.marker} Experience`,
          urlMatch: { type: 'exact', value: '/' },
          changes: [{ selector: 'h1', action: 'hide' }],
        })
      ).experienceId,
    }),
  ],
  [
    'templateId',
    async (c) => ({
      templateId: (await api(c, 'POST', '/v0/templates', { pageId: c.fx.ids.pageId, name: `${c.fx.marker} Template` })).templateId,
    }),
  ],
  [
    'dealId',
    async (c) => ({
      dealId: (
        await api(c, 'POST', '/v0/deals', {
          source: 'api',
          externalId: unique('deal'),
          name: `${c.fx.marker} Deal`,
          amount: 1200.5,
          currency: 'EUR',
          stage: 'open',
          accountId: c.fx.ids.accountId,
          createdAt: '2026-06-01T00:00:00.000Z',
        })
      ).dealId,
    }),
  ],
  ['runningExperimentId', async (c) => ({ runningExperimentId: await versionsExperiment(c, true) })],
  [
    'pageLinkId',
    async (c) => ({
      pageLinkId: (
        await api(c, 'POST', '/v0/page_links', {
          path: `/${c.fx.marker}/${unique('l')}`,
          target: { targetType: 'page', pageId: c.fx.ids.pageId },
        })
      ).pageLinkId,
    }),
  ],
  [
    'subscriptionId',
    async (c) => ({
      subscriptionId: (
        await api(c, 'POST', '/v0/webhook_subscriptions', { url: `${c.receiver.url}/fixture/${c.fx.marker}`, events: ['topic.created'] })
      ).subscriptionId,
    }),
  ],
  // A HubSpot integration: its sync asks an unreachable default host, which only lands on lastError.
  [
    'integrationId',
    async (c) => ({
      integrationId: (await api(c, 'POST', '/v0/integrations', { provider: 'hubspot', accessToken: `pat-${c.fx.marker}` })).integrationId,
    }),
  ],
  [
    'alertId',
    async (c) => ({
      alertId: (
        await api(c, 'POST', '/v0/alerts', {
          name: `${c.fx.marker} Alert`,
          channel: { type: 'slack', webhookUrl: `${c.receiver.url}/fixture/${c.fx.marker}/alert` },
          when: { event: 'visit.started' },
        })
      ).alertId,
    }),
  ],
  [
    'deliveryId',
    async (c) => {
      const d = await api(c, 'POST', `/v0/webhook_subscriptions/${c.fx.ids.subscriptionId}/test`, {});
      await settle(c, c.fx.ids.subscriptionId!, d.deliveryId);
      return { deliveryId: d.deliveryId };
    },
  ],
  ['eventId', async (c) => ({ eventId: (await api(c, 'GET', '/v0/events?limit=1')).items[0].eventId })],
  [
    'apiKeyId',
    async (c) => {
      const k = await api(c, 'POST', `/admin/tenants/${c.fx.tenant.tenantId}/api_keys`, {}, { authorization: `Bearer ${ADMIN_TOKEN}` });
      return { apiKeyId: k.apiKeyId };
    },
  ],
];

/** A draft (or started) `versions` experiment with arms `a` and `b` on a new audience of the fixture's page. */
async function versionsExperiment(c: Ctx, start: boolean): Promise<string> {
  const page = c.fx.ids.pageId;
  const audience = await api(c, 'POST', `/v0/pages/${page}/audiences`, {});
  const draft = await api(c, 'POST', `/v0/pages/${page}/audiences/${audience.audienceId}/versions`, {});
  const { experimentId } = await api(c, 'POST', `/v0/pages/${page}/experiments`, {
    name: `${c.fx.marker} Experiment`,
    kind: 'versions',
    audienceId: audience.audienceId,
    arms: [
      { key: 'a', weight: 1, versionId: audience.publishedVersion.versionId },
      { key: 'b', weight: 1, versionId: draft.versionId },
    ],
  });
  if (start) await api(c, 'POST', `/v0/pages/${page}/experiments/${experimentId}/start`);
  return experimentId;
}

/** Creates one of everything in `tenant`; `marker` goes into the names (for searches). */
export async function buildFixture(
  t: TestApp,
  receiver: Receiver,
  tenant: Tenant,
  marker: string,
  timeoutMs = REQUEST_TIMEOUT_MS,
): Promise<Ctx> {
  const fx: Fixture = { tenant, ids: { tenantId: tenant.tenantId }, marker, responses: [] };
  const c: Ctx = { t, fx, receiver, timeoutMs };
  for (const [key, make] of MAKERS) {
    // The tenant's own first key stays the fixture's apiKeyId: fresh ones are made per request.
    if (key === 'apiKeyId') continue;
    Object.assign(fx.ids, await make(c));
  }
  fx.ids.apiKeyId = tenant.apiKeyId;
  return c;
}

/** A new resource of this kind under the fixture's parents, for one request. */
export async function freshId(c: Ctx, key: string): Promise<string> {
  const maker = MAKERS.find(([k]) => k === key);
  if (!maker) throw new Error(`no maker for a fresh ${key}: extend MAKERS in test/fuzz/contract.ts`);
  const made = await maker[1](c);
  const id = made[key];
  if (!id) throw new Error(`the maker of ${key} gave no ${key}`);
  return id;
}

/** The fixture key a path parameter or field names: `person_log_id` → `personLogId`, `parentAssetId` → `assetId`. */
const ALIASES: Record<string, string> = {
  parentAssetId: 'assetId',
  logoAssetId: 'assetId',
  faviconAssetId: 'assetId',
  headerActionId: 'actionId',
  subscription: 'subscriptionId',
};
export function fixtureKeyFor(name: string, ids: Record<string, string>): string | undefined {
  if (ALIASES[name]) return ALIASES[name];
  const camel = name.replace(/_([a-z])/g, (_m, ch: string) => ch.toUpperCase());
  if (camel in ids) return camel;
  return undefined;
}

/** Operations whose last path parameter is a resource the request changes for good: each request gets its own. */
const FRESH: RegExp[] = [
  /^DELETE /,
  /^PATCH \/v0\/pages\/\{page_id\}$/, // actions and headerActionId evolve with every patch
  /^(PATCH|POST) .*\/versions\/\{version_id\}(\/cancel)?$/, // the state machine moves only forward
  /\/retry$/, // a retried delivery is pending until sent again
  /\/experiments\/\{experiment_id\}\/(start|conclude)$/, // an experiment starts once and concludes once
  /^POST \/v0\/alerts\/\{alert_id\}\/test$/, // one test message a minute per alert (issue 45)
];

/** The fixture a fresh parameter of these operations is made from, where it differs from the parameter's own. */
const FRESH_KEYS: [RegExp, string][] = [[/\/experiments\/\{experiment_id\}\/conclude$/, 'runningExperimentId']];
export function freshParam(op: Operation): string | undefined {
  return FRESH.some((r) => r.test(op.key)) ? op.pathParams[op.pathParams.length - 1]?.name : undefined;
}

// =============================================================================================
// Requests

export type PathValue = { kind: 'ref'; key: string; fresh: boolean } | { kind: 'raw'; segment: string };

export type Body =
  | { kind: 'none' }
  | { kind: 'json'; value: unknown; contentType?: string }
  | { kind: 'text'; text: string | Buffer; contentType?: string }
  | {
      kind: 'image';
      format: ImageFormat;
      width: number;
      height: number;
      rgb: [number, number, number];
      contentType?: string;
      cut?: number;
    };

export interface RequestSpec {
  op: Operation;
  /** `valid`, or the name of what was broken. */
  label: string;
  /** The statuses an invalid request may get (any 4xx when undefined). */
  expect?: number[];
  path: Record<string, PathValue>;
  /** Already encoded, without `?`. */
  query: string;
  body: Body;
  /** Headers replacing the credential (`{}`: none at all); undefined: the right one. */
  credentials?: Record<string, string>;
}

export interface Concrete {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
}

export interface Exchange {
  req: Concrete;
  res: Res;
  ms: number;
}

export async function materialize(c: Ctx, spec: RequestSpec): Promise<Concrete> {
  let url = spec.op.path;
  for (const p of spec.op.pathParams) {
    const v = spec.path[p.name];
    if (!v) throw new Error(`${spec.op.key}: no value for path parameter ${p.name}`);
    let segment: string;
    if (v.kind === 'raw') segment = v.segment;
    else {
      const id = v.fresh ? await freshId(c, v.key) : c.fx.ids[v.key];
      if (id === undefined) throw new Error(`no fixture id for ${v.key}`);
      segment = encodeURIComponent(id);
    }
    url = url.replace(`{${p.name}}`, segment);
  }
  if (spec.query !== '') url += `?${spec.query}`;
  const headers: Record<string, string> = {};
  if (spec.credentials) Object.assign(headers, spec.credentials);
  else if (spec.op.auth.kind === 'apiKey') headers[spec.op.auth.header] = c.fx.tenant.key;
  else if (spec.op.auth.kind === 'bearer') headers.authorization = `Bearer ${ADMIN_TOKEN}`;
  let payload: string | Buffer | undefined;
  const b = spec.body;
  if (b.kind === 'json') {
    payload = toJsonText(b.value);
    headers['content-type'] = b.contentType ?? 'application/json';
  } else if (b.kind === 'text') {
    payload = b.text;
    if (b.contentType !== undefined) headers['content-type'] = b.contentType;
  } else if (b.kind === 'image') {
    const bytes = await makeImage(b.format, b.width, b.height, b.rgb);
    payload = b.cut === undefined ? bytes : bytes.subarray(0, Math.max(1, Math.floor(bytes.length * b.cut)));
    headers['content-type'] = b.contentType ?? IMAGE_MIME[b.format];
  }
  return { method: spec.op.method, url, headers, ...(payload !== undefined ? { payload } : {}) };
}

export async function send(c: Ctx, spec: RequestSpec): Promise<Exchange> {
  const req = await materialize(c, spec);
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${c.timeoutMs} ms (a hang)\n${describeRequest(req)}`)), c.timeoutMs);
  });
  try {
    const res = await Promise.race([
      c.t.app.inject({
        method: req.method as 'GET',
        url: req.url,
        headers: req.headers,
        ...(req.payload !== undefined ? { payload: req.payload } : {}),
      }),
      timeout,
    ]);
    return { req, res: toRes(res), ms: Date.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

function clip(text: string, max = 1500): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text;
}

function printable(text: string): string {
  // Lone surrogates and controls shown as escapes, so the report can be copied.
  return JSON.stringify(text).slice(1, -1);
}

export function describeRequest(req: Concrete): string {
  const headers = Object.entries(req.headers)
    .map(([k, v]) => `  ${k}: ${v}`)
    .join('\n');
  let body = '';
  if (Buffer.isBuffer(req.payload)) body = `\n  <${req.payload.length} bytes: ${req.payload.subarray(0, 48).toString('hex')}…>`;
  else if (req.payload !== undefined) body = `\n  ${clip(printable(req.payload))}`;
  return `${req.method} ${clip(req.url, 400)}\n${headers}${body}`;
}

export function describeResponse(res: Res): string {
  return `${res.status} ${res.headers['content-type'] ?? '(no content-type)'}\n  ${clip(printable(res.text ?? ''), 800)}`;
}

// =============================================================================================
// Generation

interface Hint {
  /** Values the service accepts here, mixed 4:1 with the schema's own (or alone with `only`). */
  arb?: (g: Gen) => fc.Arbitrary<unknown>;
  only?: boolean;
  /** The chance an optional field or parameter is sent at all (default 0.5). */
  include?: number;
  /** The value of a minimal request (isolation sweep). */
  minimal?: (g: Gen) => unknown;
  /** Several minimal values, each a different case (the first is the minimal one). */
  variants?: (g: Gen) => unknown[];
}

/** fc.stringMatching, built once per pattern (building one is costly). */
const matchingCache = new Map<string, fc.Arbitrary<string>>();
function matching(pattern: string): fc.Arbitrary<string> {
  let arb = matchingCache.get(pattern);
  if (!arb) {
    arb = fc.stringMatching(new RegExp(pattern));
    matchingCache.set(pattern, arb);
  }
  return arb;
}

const idLike = (prefix: string) => matching('^[0-7][0-9a-hjkmnp-tv-z]{25}$').map((s) => `${prefix}_${s}`);
const futureInstant = () =>
  fc
    .date({ min: new Date(Date.now() + 3_600_000), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true })
    .map((d) => d.toISOString());
const label = matching('^[a-z0-9]{6,12}$');

/**
 * Where the schema alone does not say what works. Matched against `<op key> <pointer>`, where the
 * pointer is /body/..., /query/<name> or /path/<name>, array items as `*`.
 */
const HINTS: { at: RegExp; hint: Hint }[] = [
  // A cursor only works when it came from the same list: mostly leave it out.
  { at: / \/query\/cursor$/, hint: { include: 0.1 } },
  // Webhook deliveries go to the local receiver.
  {
    at: /webhook_subscriptions.* \/body\/url$/,
    hint: {
      arb: (g) => fc.tuple(label, fc.webPath()).map(([l, p]) => `${g.c.receiver.url}/hook/${l}${p}`),
      minimal: (g) => `${g.c.receiver.url}/hook/${unique()}`,
    },
  },
  // Hostnames are unique across all tenants, and must be DNS names.
  {
    at: /^POST \/v0\/tenant_domains \/body\/hostname$/,
    hint: { arb: () => fc.tuple(label, fc.domain()).map(([l, d]) => `${l}.${d}`), minimal: () => `${unique('h')}.example.org` },
  },
  // Account domains are unique in the tenant.
  {
    at: /^POST \/v0\/accounts \/body\/domain$/,
    hint: { arb: () => fc.tuple(label, fc.domain()).map(([l, d]) => `${l}.${d}`), minimal: () => `${unique('a')}.example.org` },
  },
  // Link paths are unique per domain; the target must be a page or audience of the tenant.
  {
    at: /^POST \/v0\/page_links \/body\/path$/,
    hint: { arb: () => fc.tuple(label, fc.webPath()).map(([l, p]) => `/${l}${p}`), minimal: () => `/${unique('p')}` },
  },
  {
    at: /^POST \/v0\/page_links \/body\/target$/,
    hint: {
      arb: (g) =>
        fc.constantFrom(
          { targetType: 'page', pageId: g.id('pageId') },
          { targetType: 'page_routing', pageId: g.id('pageId') },
          { targetType: 'audience', audienceId: g.id('audienceId') },
        ),
      variants: (g) => [
        { targetType: 'page', pageId: g.id('pageId') },
        { targetType: 'page_routing', pageId: g.id('pageId') },
        { targetType: 'audience', audienceId: g.id('audienceId') },
      ],
    },
  },
  // A section's layout fields must match its layout, name the tenant's images and the page's actions (issue 38): text sections.
  {
    at: / \/body\/content\/sections\/\*\/(layout|imageAssetId|imageAlt|imageSide|items|author|role|actionId|videoUrl)$/,
    hint: { include: 0 },
  },
  // A new action has no id yet; the header action must be one of the page's: mostly none.
  { at: / \/body\/actions\/\*\/actionId$/, hint: { include: 0.05 } },
  // Only a form action may leave out its url (issue 38): an action of any other type needs one.
  { at: / \/body\/actions\/\*\/url$/, hint: { include: 0.97 } },
  { at: / \/body\/headerActionId$/, hint: { arb: () => fc.constant(null), include: 0.3 } },
  // Idempotency keys: the same key with another body is a 422, so mostly unique ones.
  { at: / \/body\/idempotencyKey$/, hint: { arb: () => fc.uuid() } },
  // Experiments: a holdout's arms are exactly control and personalised; a versions experiment's fixture has arms a and b.
  { at: /^POST \/v0\/pages\/\{page_id\}\/experiments \/body\/kind$/, hint: { arb: () => fc.constant('holdout'), only: true } },
  {
    at: /^POST \/v0\/pages\/\{page_id\}\/experiments \/body\/arms$/,
    hint: {
      arb: () =>
        fc.tuple(fc.integer({ min: 1, max: 10000 }), fc.integer({ min: 1, max: 10000 })).map(([c, p]) => [
          { key: 'control', weight: c },
          { key: 'personalised', weight: p },
        ]),
      only: true,
    },
  },
  { at: /^POST \/v0\/pages\/\{page_id\}\/experiments \/body\/audienceId$/, hint: { include: 0 } },
  {
    at: /^PATCH \/v0\/pages\/\{page_id\}\/experiments\/\{experiment_id\} \/body\/arms$/,
    hint: {
      arb: () =>
        fc.tuple(fc.integer({ min: 1, max: 10000 }), fc.integer({ min: 1, max: 10000 })).map(([a, b]) => [
          { key: 'a', weight: a },
          { key: 'b', weight: b },
        ]),
      only: true,
    },
  },
  { at: /\/conclude \/body\/winner$/, hint: { arb: () => fc.constantFrom('a', 'b'), only: true, minimal: () => 'a' } },
  // Goals and funnel steps: which field a kind takes is the service's rule (a 400 naming the field
  // otherwise), so valid requests are of kind event with its eventName, and a currency the list has.
  { at: /^(POST|PATCH) \/v0\/goals\S* \/body\/kind$/, hint: { arb: () => fc.constant('event'), only: true, include: 1 } },
  { at: /^(POST|PATCH) \/v0\/goals\S* \/body\/eventName$/, hint: { include: 1 } },
  { at: /^(POST|PATCH) \/v0\/goals\S* \/body\/(pageId|actionPurpose|path|threshold|pathPattern)$/, hint: { include: 0 } },
  { at: /^(POST|PATCH) \/v0\/goals\S* \/body\/currency$/, hint: { arb: () => fc.constantFrom('EUR', 'USD', 'JPY', null), only: true } },
  { at: /^(POST|PATCH) \/v0\/funnels\S* \/body\/steps\/\*\/kind$/, hint: { arb: () => fc.constant('event'), only: true } },
  { at: /^(POST|PATCH) \/v0\/funnels\S* \/body\/steps\/\*\/eventName$/, hint: { include: 1 } },
  { at: /^(POST|PATCH) \/v0\/funnels\S* \/body\/steps\/\*\/(pageId|actionPurpose|path)$/, hint: { include: 0 } },
  { at: /funnels\/\{funnel_id\}\/results \/query\/(startDate|endDate)$/, hint: { include: 0.3 } },
  // Sites and experiences (issue 48): origins, URL patterns, selectors and each action's fields are
  // the service's rules (400 naming the field otherwise), so valid requests use known good values.
  { at: /^(POST|PATCH) \/v0\/sites\S* \/body\/origins$/, hint: { arb: () => fc.constant(['https://fuzz.example']), only: true } },
  { at: /^POST \/v0\/experiences \/body\/siteId$/, hint: { arb: (g) => fc.constant(g.c.fx.ids.siteId), only: true } },
  {
    at: /^(POST|PATCH) \/v0\/experiences\S* \/body\/urlMatch$/,
    hint: { arb: () => fc.constant({ type: 'prefix', value: '/fuzz' }), only: true },
  },
  { at: /^(POST|PATCH) \/v0\/experiences\S* \/body\/conversionUrl$/, hint: { arb: () => fc.constantFrom('/thanks', null), only: true } },
  { at: /^(POST|PATCH) \/v0\/experiences\S* \/body\/rules$/, hint: { arb: () => fc.constant(null), only: true } },
  {
    at: /^(POST|PATCH) \/v0\/experiences\S* \/body\/changes$/,
    hint: { arb: () => fc.constant([{ selector: 'main h1', action: 'text', value: 'Hi {{utm.term | there}}' }]), only: true },
  },
  // An alert's Slack URL is the receiver's (a random string is a 400 naming it); its ids are the
  // tenant's (random ones are 400 at each), so valid requests mostly name none.
  { at: /alerts\S* \/body\/channel\/webhookUrl$/, hint: { arb: (g) => fc.constant(`${g.c.receiver.url}/fuzz/alert`), only: true } },
  { at: /alerts\S* \/body\/when\/(accountIds|segmentIds|pageIds)$/, hint: { arb: () => fc.constant(null), include: 0.3 } },
  // A page from a template takes its content and actions from it: sent beside templateId, they are a 400 (issue 38).
  { at: /^POST \/v0\/pages \/body\/templateId$/, hint: { include: 0 } },
  // Deals (issue 40): an amount of at most 2 decimals and a currency the ISO list has (400 otherwise).
  {
    at: /^POST \/v0\/deals \/body\/amount$/,
    hint: { arb: () => fc.integer({ min: 0, max: 100_000_000_000_000 }).map((n) => n / 100), only: true },
  },
  { at: /^POST \/v0\/deals \/body\/currency$/, hint: { arb: () => fc.constantFrom('EUR', 'USD', 'JPY'), only: true } },
  { at: /^GET \/v0\/deals \/query\/(startDate|endDate)$/, hint: { include: 0.3 } },
  // The pipeline's experimentId goes with groupBy=arm only, and its range is at most 400 days.
  { at: /^GET \/v0\/analytics\/pipeline \/query\/experimentId$/, hint: { include: 0 } },
  {
    at: /^GET \/v0\/analytics\/pipeline \/query\/groupBy$/,
    hint: { arb: () => fc.constantFrom('page', 'audience', 'segment'), only: true },
  },
  { at: /^GET \/v0\/analytics\/pipeline \/query\/(startDate|endDate)$/, hint: { include: 0.3 } },
  // Valid integrations are HubSpot's: its token, none of Salesforce's fields (a 400 naming them).
  { at: /^POST \/v0\/integrations \/body\/provider$/, hint: { arb: () => fc.constant('hubspot'), only: true } },
  { at: /^POST \/v0\/integrations \/body\/accessToken$/, hint: { include: 1 } },
  { at: /^POST \/v0\/integrations \/body\/(clientId|clientSecret|instanceUrl)$/, hint: { include: 0 } },
  // The fixture's integration is HubSpot's: Salesforce's fields on it are a 400 naming them.
  { at: /^PATCH \/v0\/integrations\/\{integration_id\} \/body\/(clientId|clientSecret|instanceUrl)$/, hint: { include: 0 } },
  { at: /^PATCH \/v0\/integrations\/\{integration_id\} \/body\/provider$/, hint: { arb: () => fc.constant('hubspot'), only: true } },
  // A phone number is E.164, taken as it is, or one as people type it that must be a possible number
  // (issue 38): random text in the format's bounds is mostly a 400 naming it.
  {
    at: / \/body\/phoneNumber$/,
    hint: {
      arb: () =>
        fc.oneof(
          fc.stringMatching(/^\+[1-9]\d{1,14}$/),
          fc.constantFrom('+44 20 7183 8750', '+1 (415) 555-0100', '+49 30 901820', '+33 1 42 68 53 00'),
        ),
    },
  },
  // An API key's expiry must lie in the future.
  { at: /api_keys \/body\/expiresAt$/, hint: { arb: futureInstant } },
  // A range whose start is after its end is a 400: the dates are put in order (see `orderDates`).
  { at: /audience_sessions \/query\/(startDate|endDate)$/, hint: { include: 0.3 } },
];

/** Values that are ids of the tenant's resources where a field names one (personId, fileId, ...). */
function idHint(g: Gen, name: string): Hint | undefined {
  const key = fixtureKeyFor(name, g.c.fx.ids);
  if (!key || key === 'actionId') return undefined;
  return { arb: (gen) => fc.constant(gen.id(key)), minimal: (gen) => gen.id(key) };
}

export class Gen {
  constructor(
    readonly c: Ctx,
    readonly op: Operation,
  ) {}

  id(key: string): string {
    const id = this.c.fx.ids[key];
    if (id === undefined) throw new Error(`no fixture id ${key}`);
    return id;
  }

  hint(ptr: string): Hint | undefined {
    const at = `${this.op.key} ${ptr}`;
    const found = HINTS.find((h) => h.at.test(at))?.hint;
    const name = ptr.split('/').pop() ?? '';
    const byId = name !== '*' ? idHint(this, name) : undefined;
    return found ?? byId;
  }

  /** Values valid for `schema`, at `ptr`. */
  valid(schema: Schema, ptr: string): fc.Arbitrary<unknown> {
    const hint = this.hint(ptr);
    const own = this.fromSchema(schema, ptr);
    if (!hint?.arb) return own;
    const hinted = hint.arb(this).filter((v) => validator(schema)(v));
    return hint.only ? hinted : fc.oneof({ weight: 4, arbitrary: hinted }, { weight: 1, arbitrary: own });
  }

  private fromSchema(schema: Schema, ptr: string): fc.Arbitrary<unknown> {
    if (schema === true || schema === undefined || (typeof schema === 'object' && Object.keys(schema).length === 0))
      return fc.jsonValue({ maxDepth: 2 });
    if (schema.const !== undefined) return fc.constant(schema.const);
    if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
    for (const key of ['anyOf', 'oneOf'] as const) {
      if (Array.isArray(schema[key])) return fc.oneof(...branchesOf(schema, key).map((s) => this.fromSchema(s, ptr)));
    }
    const types = typesOf(schema);
    if (types.length === 0) return fc.jsonValue({ maxDepth: 2 });
    const arbs = types.map((type) => {
      const one = withType(schema, type);
      switch (type) {
        case 'null':
          return { weight: 1, arbitrary: fc.constant(null) as fc.Arbitrary<unknown> };
        case 'string':
          return { weight: 3, arbitrary: this.string(one) };
        case 'integer':
          return { weight: 3, arbitrary: this.integer(one) };
        case 'number':
          return { weight: 3, arbitrary: this.number(one) };
        case 'boolean':
          return { weight: 3, arbitrary: fc.boolean() as fc.Arbitrary<unknown> };
        case 'array':
          return { weight: 3, arbitrary: this.array(one, ptr) };
        case 'object':
          return { weight: 3, arbitrary: this.object(one, ptr) };
        default:
          throw new Error(`${this.op.key} ${ptr}: type ${type} is not supported by the fuzzer`);
      }
    });
    return arbs.length === 1 ? arbs[0]!.arbitrary : fc.oneof(...arbs);
  }

  private string(schema: Schema): fc.Arbitrary<unknown> {
    const min: number = schema.minLength ?? 0;
    const max: number | undefined = schema.maxLength;
    let arb: fc.Arbitrary<string>;
    if (schema.format === 'email') arb = fc.emailAddress();
    else if (schema.format === 'date-time') arb = dateTime();
    else if (typeof schema.pattern === 'string') arb = matching(schema.pattern);
    else {
      const options = [{ weight: 8, arbitrary: fc.string({ unit: textUnit, minLength: min, maxLength: max ?? Math.max(min, 24) }) }];
      // The boundaries: exactly the shortest and the longest allowed.
      if (max !== undefined) options.push({ weight: 1, arbitrary: fc.string({ unit: textUnit, minLength: max, maxLength: max }) });
      if (min > 0) options.push({ weight: 1, arbitrary: fc.string({ unit: textUnit, minLength: min, maxLength: min }) });
      arb = fc.oneof(...options);
    }
    const check = validator(schema);
    return arb.filter((s) => check(s));
  }

  private integer(schema: Schema): fc.Arbitrary<unknown> {
    let min = typeof schema.minimum === 'number' ? schema.minimum : -(2 ** 40);
    let max = typeof schema.maximum === 'number' ? schema.maximum : 2 ** 40;
    if (typeof schema.exclusiveMinimum === 'number') min = Math.floor(schema.exclusiveMinimum) + 1;
    if (typeof schema.exclusiveMaximum === 'number') max = Math.ceil(schema.exclusiveMaximum) - 1;
    min = Math.max(min, Number.MIN_SAFE_INTEGER);
    max = Math.min(max, Number.MAX_SAFE_INTEGER);
    return fc.oneof(
      { weight: 6, arbitrary: fc.bigInt(BigInt(Math.ceil(min)), BigInt(Math.floor(max))).map(Number) },
      { weight: 1, arbitrary: fc.constantFrom(min, max) },
    );
  }

  private number(schema: Schema): fc.Arbitrary<unknown> {
    const min = typeof schema.minimum === 'number' ? schema.minimum : -1e12;
    const max = typeof schema.maximum === 'number' ? schema.maximum : 1e12;
    return fc
      .oneof(
        { weight: 4, arbitrary: fc.double({ min, max, noNaN: true, noDefaultInfinity: true }) },
        { weight: 2, arbitrary: fc.integer({ min: Math.ceil(Math.max(min, -(2 ** 31))), max: Math.floor(Math.min(max, 2 ** 31)) }) },
        { weight: 1, arbitrary: fc.constantFrom(min, max) },
      )
      .filter((n) => validator(schema)(n));
  }

  private array(schema: Schema, ptr: string): fc.Arbitrary<unknown> {
    const items = this.valid(schema.items ?? {}, `${ptr}/*`);
    const minLength: number = schema.minItems ?? 0;
    let maxLength: number = Math.min(schema.maxItems ?? minLength + 3, minLength + 3);
    const distinct = Array.isArray(schema.items?.enum) ? (schema.items.enum as unknown[]).length : undefined;
    if (schema.uniqueItems && distinct !== undefined) maxLength = Math.min(maxLength, distinct);
    const make = (lo: number, hi: number) =>
      schema.uniqueItems
        ? fc.uniqueArray(items, { minLength: lo, maxLength: hi, selector: (v) => toJsonText(v) })
        : fc.array(items, { minLength: lo, maxLength: hi });
    const options = [{ weight: 6, arbitrary: make(minLength, maxLength) }];
    // The boundary: exactly as many items as allowed.
    if (typeof schema.maxItems === 'number' && schema.maxItems <= 100 && (distinct === undefined || !schema.uniqueItems)) {
      options.push({ weight: 1, arbitrary: make(schema.maxItems, schema.maxItems) });
    }
    return fc.oneof(...options);
  }

  private object(schema: Schema, ptr: string): fc.Arbitrary<unknown> {
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    const required = new Set((schema.required ?? []) as string[]);
    if (Object.keys(properties).length === 0) {
      // A free-form object ("any JSON object") or one that must stay empty.
      if (schema.additionalProperties === false) return fc.constant({});
      return fc
        .dictionary(fc.string({ unit: textUnit, maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 })
        .map((d) => clone(d));
    }
    const OMIT = Symbol('omit');
    // Read-only fields are accepted back only with the values read (issue 19): a request never makes them up.
    const writable = Object.entries(properties).filter(([name, s]) => required.has(name) || s.readOnly !== true);
    const entries = writable.map(([name, s]) => {
      const p = `${ptr}/${name}`;
      const value = this.valid(s, p).map((v) => [name, v] as const);
      if (required.has(name)) return value;
      const include = Math.round((this.hint(p)?.include ?? 0.5) * 100);
      return fc.oneof({ weight: include, arbitrary: value }, { weight: 100 - include, arbitrary: fc.constant(OMIT) });
    });
    return fc.tuple(...entries).map((pairs) => {
      const out: Record<string, unknown> = {};
      for (const pair of pairs) if (pair !== OMIT) out[(pair as readonly [string, unknown])[0]] = (pair as readonly [string, unknown])[1];
      return out;
    });
  }

  /** One deterministic valid value: required fields only, each at its simplest (and hints). */
  minimal(schema: Schema, ptr: string): unknown {
    const hint = this.hint(ptr);
    if (hint?.variants) return hint.variants(this)[0];
    if (hint?.minimal) return hint.minimal(this);
    if (schema.const !== undefined) return schema.const;
    if (Array.isArray(schema.enum)) return schema.enum[0];
    for (const key of ['anyOf', 'oneOf'] as const) {
      if (Array.isArray(schema[key])) return this.minimal(branchesOf(schema, key)[0] as Schema, ptr);
    }
    const types = typesOf(schema).filter((x) => x !== 'null');
    const type = types[0];
    if (type === undefined) return typesOf(schema).includes('null') ? null : {};
    const s = withType(schema, type);
    switch (type) {
      case 'string': {
        if (s.format === 'email') return 'ada@example.com';
        if (s.format === 'date-time') return new Date().toISOString();
        if (typeof s.pattern === 'string') {
          const check = validator(s);
          const found = fc.sample(matching(s.pattern), { seed: 1, numRuns: 200 }).find((v) => check(v));
          if (found === undefined) throw new Error(`${ptr}: no sample of /${s.pattern}/ fits`);
          return found;
        }
        return 'x'.repeat(Math.max(1, s.minLength ?? 1));
      }
      case 'integer':
      case 'number':
        return typeof s.minimum === 'number' ? Math.max(s.minimum, Math.min(1, s.maximum ?? 1)) : 1;
      case 'boolean':
        return false;
      case 'array': {
        const items = s.items ?? {};
        const n = s.minItems ?? 0;
        if (Array.isArray(items.enum)) return (items.enum as unknown[]).slice(0, Math.max(n, 0));
        return Array.from({ length: n }, () => this.minimal(items, `${ptr}/*`));
      }
      case 'object': {
        const out: Record<string, unknown> = {};
        for (const name of (s.required ?? []) as string[]) out[name] = this.minimal(s.properties?.[name] ?? {}, `${ptr}/${name}`);
        return out;
      }
      default:
        return null;
    }
  }
}

/** Every minimal value of `schema`: one per variant a hint offers (each kind of link target, ...). */
export function minimalVariants(g: Gen, schema: Schema, ptr: string): unknown[] {
  const hint = g.hint(ptr);
  if (hint?.variants) return hint.variants(g);
  const types = typesOf(schema).filter((x) => x !== 'null');
  if (!hint?.minimal && types[0] === 'object' && schema.const === undefined && !Array.isArray(schema.enum)) {
    const s = withType(schema, 'object');
    let all: Record<string, unknown>[] = [{}];
    for (const name of (s.required ?? []) as string[]) {
      const options = minimalVariants(g, s.properties?.[name] ?? {}, `${ptr}/${name}`);
      all = all.flatMap((o) => options.map((v) => ({ ...o, [name]: v }))).slice(0, 16);
    }
    return all;
  }
  return [g.minimal(schema, ptr)];
}

/** RFC 3339 date-times as clients write them: Z or an offset, with or without fractions. */
function dateTime(): fc.Arbitrary<string> {
  const pad = (n: number, w = 2) => String(Math.abs(n)).padStart(w, '0');
  return fc
    .tuple(
      fc.date({ min: new Date('0001-01-02T00:00:00.000Z'), max: new Date('9999-12-30T23:59:59.999Z'), noInvalidDate: true }),
      fc.constantFrom('iso', 'iso', 'iso', 'seconds', 'offset', 'micro'),
      fc.integer({ min: -14 * 60, max: 14 * 60 }),
    )
    .map(([d, style, offsetMinutes]) => {
      if (style === 'iso') return d.toISOString();
      if (style === 'seconds') return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
      if (style === 'micro') return d.toISOString().replace(/Z$/, '123Z');
      const local = new Date(d.getTime() + offsetMinutes * 60_000).toISOString().slice(0, 23);
      const sign = offsetMinutes < 0 ? '-' : '+';
      return `${local}${sign}${pad(Math.trunc(offsetMinutes / 60))}:${pad(offsetMinutes % 60)}`;
    });
}

/** Puts pairs of dates in order where a range must not be reversed (a 400 otherwise). */
function orderDates(value: Json, a: string, b: string): Json {
  if (
    value &&
    typeof value === 'object' &&
    typeof value[a] === 'string' &&
    typeof value[b] === 'string' &&
    Date.parse(value[a]) > Date.parse(value[b])
  ) {
    return { ...value, [a]: value[b], [b]: value[a] };
  }
  return value;
}

function encodeQuery(pairs: [string, string][]): string {
  return pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
}

function queryText(value: unknown): string {
  return typeof value === 'string' ? value : toJsonText(value);
}

function refPath(g: Gen): Record<string, PathValue> {
  const fresh = freshParam(g.op);
  const out: Record<string, PathValue> = {};
  for (const p of g.op.pathParams) {
    const key = fixtureKeyFor(p.name, g.c.fx.ids);
    if (!key) throw new Error(`${g.op.key}: no fixture for path parameter ${p.name}; add a maker to MAKERS in test/fuzz/contract.ts`);
    const freshKey = p.name === fresh ? FRESH_KEYS.find(([at]) => at.test(g.op.key))?.[1] : undefined;
    out[p.name] = { kind: 'ref', key: freshKey ?? key, fresh: p.name === fresh };
  }
  return out;
}

function validQueryPairs(g: Gen): fc.Arbitrary<[string, string][]> {
  const OMIT = Symbol('omit');
  const each = g.op.queryParams.map((p) => {
    const ptr = `/query/${p.name}`;
    const value = g
      .valid(p.schema, ptr)
      .map(queryText)
      .filter(wellFormed)
      .map((v) => [p.name, v] as [string, string]);
    if (p.required) return value;
    const include = Math.round((g.hint(ptr)?.include ?? 0.5) * 100);
    return fc.oneof({ weight: include, arbitrary: value }, { weight: 100 - include, arbitrary: fc.constant(OMIT) });
  });
  return fc.tuple(...each).map((pairs) => {
    let list = pairs.filter((p): p is [string, string] => p !== OMIT);
    const start = list.find(([k]) => k === 'startDate');
    const end = list.find(([k]) => k === 'endDate');
    if (start && end && Date.parse(start[1]) > Date.parse(end[1]))
      list = list.map(([k, v]) => [k, k === 'startDate' ? end[1] : k === 'endDate' ? start[1] : v]);
    return list;
  });
}

/** Valid requests for an operation. */
export function validRequest(g: Gen): fc.Arbitrary<RequestSpec> {
  const op = g.op;
  const path = refPath(g);
  if (RAW_BODY_OPS.has(op.key)) {
    return fc
      .record({
        format: fc.constantFrom<ImageFormat>('png', 'jpeg', 'gif', 'webp'),
        width: fc.integer({ min: 1, max: 400 }),
        height: fc.integer({ min: 1, max: 300 }),
        rgb: fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255)),
      })
      .map((img) => ({ op, label: 'valid', path, query: '', body: { kind: 'image', ...img } }));
  }
  const body: fc.Arbitrary<Body> = op.body
    ? g.valid(op.body.schema, '/body').map((v) => ({ kind: 'json', value: orderDates(v, 'sessionStartedAt', 'sessionEndedAt') }))
    : fc.constant({ kind: 'none' });
  return fc.tuple(validQueryPairs(g), body).map(([pairs, b]) => ({ op, label: 'valid', path, query: encodeQuery(pairs), body: b }));
}

/** The simplest valid request (required fields only), deterministic. */
export function minimalRequest(g: Gen): RequestSpec {
  const op = g.op;
  const path = refPath(g);
  const pairs: [string, string][] = op.queryParams
    .filter((p) => p.required)
    .map((p) => [p.name, queryText(g.minimal(p.schema, `/query/${p.name}`))]);
  let body: Body = { kind: 'none' };
  if (RAW_BODY_OPS.has(op.key)) body = { kind: 'image', format: 'png', width: 8, height: 8, rgb: [1, 2, 3] };
  else if (op.body) body = { kind: 'json', value: g.minimal(op.body.schema, '/body') };
  return { op, label: 'minimal', path, query: encodeQuery(pairs), body };
}

// ---------------------------------------------------------------------------------------------
// Invalid requests: one thing broken

interface Slot {
  path: Seg[];
  schema: Schema;
  present: boolean;
  value?: unknown;
}

/** Every place in `value` (and every absent optional property) with the schema that governs it. */
function slotsOf(schema: Schema, value: unknown, path: Seg[] = []): Slot[] {
  const out: Slot[] = [{ path, schema, present: true, value }];
  let s = schema;
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(s?.[key])) s = branchesOf(s, key).find((b) => validator(b)(value)) ?? s;
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof RawJson)) {
    for (const [name, ps] of Object.entries((s?.properties ?? {}) as Record<string, Schema>)) {
      if (Object.hasOwn(value, name)) out.push(...slotsOf(ps, (value as Json)[name], [...path, name]));
      else out.push({ path: [...path, name], schema: ps, present: false });
    }
  } else if (Array.isArray(value) && s?.items) {
    for (const [i, v] of value.entries()) out.push(...slotsOf(s.items, v, [...path, i]));
  }
  return out;
}

const JSON_TYPE_VALUES: Record<string, fc.Arbitrary<unknown>> = {
  string: fc.oneof(fc.constantFrom('', 'x', '0', '1', 'true', 'null', '[]', '{}', '1e400'), fc.string({ unit: textUnit, maxLength: 8 })),
  integer: fc.oneof(fc.constantFrom(0, -1, 1, 42), fc.constant(new RawJson('9007199254740993'))),
  number: fc.constantFrom(1.5, -0.25, 2.71, new RawJson('1e400'), new RawJson('-1e400'), new RawJson('1.5e308')),
  boolean: fc.boolean(),
  null: fc.constant(null),
  array: fc.constantFrom([], [1], ['x'], [null], [{}]),
  object: fc.constantFrom({}, { a: 1 }, { '': null }),
};

/** A value of a JSON type the slot's schema does not allow. */
function wrongTypeValue(schema: Schema): fc.Arbitrary<unknown> | undefined {
  const allowed = new Set(typesOf(schema));
  if (allowed.size === 0) return undefined;
  if (allowed.has('number')) allowed.add('integer');
  const wrong = Object.keys(JSON_TYPE_VALUES).filter((t) => !allowed.has(t));
  if (allowed.has('integer') && !allowed.has('number')) wrong.push('number'); // 1.5 is no integer
  return fc.constantFrom(...wrong).chain((t) => JSON_TYPE_VALUES[t]!);
}

/** A number outside the slot's bounds, written as JSON text (2^53 + 1, 1e400, ...). */
function outOfRange(schema: Schema): fc.Arbitrary<unknown> | undefined {
  const types = typesOf(schema);
  const integer = types.includes('integer') && !types.includes('number');
  if (!types.includes('integer') && !types.includes('number')) return undefined;
  const options: fc.Arbitrary<unknown>[] = [fc.constantFrom(new RawJson('1e400'), new RawJson('-1e400'))];
  if (typeof schema.minimum === 'number') {
    options.push(
      fc.constantFrom(schema.minimum - 1, integer ? schema.minimum - 1 : schema.minimum - 1e-9, new RawJson('-9007199254740993')),
    );
  }
  if (typeof schema.maximum === 'number') {
    options.push(fc.constantFrom(schema.maximum + 1, new RawJson('9007199254740993'), new RawJson('18446744073709551616')));
  }
  return fc.oneof(...options);
}

function overlong(schema: Schema): fc.Arbitrary<unknown> | undefined {
  if (!typesOf(schema).includes('string') || typeof schema.maxLength !== 'number') return undefined;
  const max: number = schema.maxLength;
  return fc.oneof(
    fc.integer({ min: 1, max: 5 }).map((extra) => 'a'.repeat(max + extra)),
    fc.tuple(fc.integer({ min: 1, max: 3 }), oddChar).map(([extra, ch]) => `${'b'.repeat(max)}${ch.repeat(extra)}`),
    fc.constantFrom(10, 100).map((times) => 'c'.repeat(Math.min(max * times + 1, 200_000))),
  );
}

/** Odd Unicode where the schema leaves no room for it: enums, patterns, formats. */
function oddUnicode(schema: Schema, value: unknown): fc.Arbitrary<unknown> | undefined {
  if (!typesOf(schema).includes('string') || !(Array.isArray(schema.enum) || schema.pattern || schema.format)) return undefined;
  const base = typeof value === 'string' && value.length > 0 ? value : Array.isArray(schema.enum) ? String(schema.enum[0]) : 'a';
  return fc.tuple(oddChar, fc.constantFrom('prefix', 'suffix', 'middle', 'only')).map(([ch, where]) => {
    if (where === 'prefix') return ch + base;
    if (where === 'suffix') return base + ch;
    if (where === 'only') return ch;
    const mid = Math.floor(base.length / 2);
    return base.slice(0, mid) + ch + base.slice(mid);
  });
}

const unknownKey = (known: string[]): fc.Arbitrary<string> =>
  fc
    .oneof(
      fc.string({ unit: textUnit, minLength: 1, maxLength: 12 }),
      fc.constantFrom('__proto__', 'constructor', 'prototype', '', ' ', '$ref', 'id', 'tenantId', '\ud800', '\u200b'),
      known.length > 0
        ? fc.tuple(fc.constantFrom(...known), fc.constantFrom('\u200b', '\u200f', ' ', '\u0000', 'X')).map(([k, s]) => k + s)
        : fc.constant('zz'),
      known.length > 0 ? fc.constantFrom(...known).map((k) => k.toUpperCase()) : fc.constant('ZZ'),
    )
    .filter((k) => !known.includes(k));

/** Whether the server must refuse this body text (by the schema, or as JSON). */
export function bodyIsInvalid(op: Operation, text: string | Buffer): boolean {
  const schema = op.body?.schema;
  if (!schema) return false;
  const str = Buffer.isBuffer(text) ? text.toString('utf8') : text;
  if (str.length === 0) return !admitsNull(schema) && op.body?.required === true;
  let parsed: unknown;
  try {
    parsed = JSON.parse(str);
  } catch {
    return true;
  }
  if (/"(__proto__|constructor)"\s*:/.test(str)) return true; // refused as prototype poisoning
  return !validator(schema)(parsed) || hasNonFinite(parsed);
}

const DEEP_ARRAY = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const MANY_ITEMS = `[${new Array(10_001).fill('0').join(',')}]`;
const OVER_LIMIT = `{"x":"${'y'.repeat(1024 * 1024 + 16)}"}`;

const SHALLOW_BROKEN = [
  '{',
  '}',
  '[',
  '{"a":',
  '{"a" 1}',
  "{'a': 1}",
  '{a: 1}',
  '{"a": 1,}',
  '[1,]',
  'nul',
  'tru',
  'NaN',
  'Infinity',
  '-Infinity',
  'undefined',
  '/* comment */ {}',
  '{} // comment',
  '{}}',
  '{} {}',
  '"unterminated',
  '\u0000',
  '{"a": "\\x41"}',
  '{"a": "\\u12"}',
  '{"a": 01}',
  '{"a": .5}',
  '{"a": +1}',
  '{"a": 1e}',
  '{"a": 0x10}',
  '\t\n ',
  '{"a":"b"\u0000}',
  '{"\ud800": 1',
];

function bodyMutations(g: Gen, base: Body): fc.Arbitrary<RequestSpec['body'] & { label: string; expect?: number[] }>[] {
  const op = g.op;
  if (!op.body || base.kind !== 'json') return [];
  const value = base.value;
  const text = toJsonText(value);
  const slots = slotsOf(op.body.schema, value);
  const out: fc.Arbitrary<Body & { label: string; expect?: number[] }>[] = [];
  const json = (label: string, v: unknown) => ({ kind: 'json' as const, value: v, label, expect: [400] });
  const typed = slots.map((s) => ({ s, arb: wrongTypeValue(s.schema) })).filter((x) => x.arb);
  if (typed.length > 0)
    out.push(
      fc
        .constantFrom(...typed)
        .chain(({ s, arb }) => arb!.map((v) => json(`wrong type at ${pointer(s.path) || '/'}`, setAt(value, s.path, v)))),
    );
  const ranged = slots.map((s) => ({ s, arb: outOfRange(s.schema) })).filter((x) => x.arb);
  if (ranged.length > 0)
    out.push(
      fc
        .constantFrom(...ranged)
        .chain(({ s, arb }) => arb!.map((v) => json(`out of range at ${pointer(s.path)}`, setAt(value, s.path, v)))),
    );
  const long = slots.map((s) => ({ s, arb: overlong(s.schema) })).filter((x) => x.arb);
  if (long.length > 0)
    out.push(
      fc.constantFrom(...long).chain(({ s, arb }) => arb!.map((v) => json(`overlong at ${pointer(s.path)}`, setAt(value, s.path, v)))),
    );
  const odd = slots.map((s) => ({ s, arb: oddUnicode(s.schema, s.value) })).filter((x) => x.arb);
  if (odd.length > 0)
    out.push(
      fc.constantFrom(...odd).chain(({ s, arb }) => arb!.map((v) => json(`odd unicode at ${pointer(s.path)}`, setAt(value, s.path, v)))),
    );
  const withRequired = slots.filter(
    (s) => s.present && s.value && typeof s.value === 'object' && !Array.isArray(s.value) && (s.schema?.required ?? []).length > 0,
  );
  if (withRequired.length > 0) {
    out.push(
      fc
        .constantFrom(...withRequired)
        .chain((s) =>
          fc
            .constantFrom(...(s.schema.required as string[]))
            .map((name) => json(`missing required ${pointer([...s.path, name])}`, deleteAt(value, [...s.path, name]))),
        ),
    );
  }
  const closed = slots.filter(
    (s) => s.present && s.value && typeof s.value === 'object' && !Array.isArray(s.value) && s.schema?.additionalProperties === false,
  );
  if (closed.length > 0) {
    out.push(
      fc
        .constantFrom(...closed)
        .chain((s) =>
          fc
            .tuple(unknownKey(Object.keys(s.schema.properties ?? {})), fc.jsonValue({ maxDepth: 1 }))
            .map(([k, v]) => json(`unknown field ${printable(k)} at ${pointer(s.path) || '/'}`, setAt(value, [...s.path, k], v))),
        ),
    );
  }
  // Broken JSON, as text.
  const raw = (label: string, t: string | Buffer, expect: number[] = [400]) => ({
    kind: 'text' as const,
    text: t,
    contentType: 'application/json',
    label,
    expect,
  });
  // Refused before anything looks at the content, whatever the schema.
  out.push(
    fc.oneof(
      fc.integer({ min: 65, max: 5000 }).map((depth) => raw(`nesting ${depth} deep`, DEEP_ARRAY(depth))),
      fc.constant(raw('10,001 array items', MANY_ITEMS)),
      fc.constant(raw('body over 1 MiB', OVER_LIMIT, [413])),
    ),
  );
  out.push(
    fc
      .oneof(
        fc.nat(Math.max(0, text.length - 1)).map((n) => raw('truncated JSON', text.slice(0, n))),
        fc.constantFrom('}', ']', ',', 'x', '{}', ' true', '"', '\u0000').map((tail) => raw('trailing garbage', text + tail)),
        fc.constantFrom(...SHALLOW_BROKEN).map((t) => raw('broken JSON', t)),
        fc.constant(raw('single quotes', text.replace(/"/g, "'"))),
        fc
          .constantFrom(
            Buffer.from([0xff, 0xfe]),
            Buffer.from([0xc0, 0x80]),
            Buffer.from([0xed, 0xa0, 0x80]),
            Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]),
          )
          .map((bad) => raw('invalid UTF-8', Buffer.concat([bad, Buffer.from(text)]))),
        fc.constantFrom('null', '"text"', '123', 'true', '[]', '[{}]').map((t) => raw(`a JSON ${t} as the body`, t)),
        fc.constant(raw('no body', '')),
      )
      .filter((b) => bodyIsInvalid(op, b.text)),
  );
  // A body in another media type.
  out.push(
    fc
      .constantFrom(
        'text/plain',
        'application/x-www-form-urlencoded',
        'application/xml',
        'multipart/form-data; boundary=x',
        'text/html',
        'application/octet-stream',
      )
      .map((ct) => ({ kind: 'text' as const, text, contentType: ct, label: `Content-Type ${ct}`, expect: [415] })),
  );
  return out.map((a) => a.filter((b) => b.kind !== 'json' || bodyIsInvalid(op, toJsonText(b.value))));
}

const INTEGER_TEXT = [
  'abc',
  '1.5',
  '0x10',
  '1e1',
  ' 5',
  '5 ',
  '+5',
  '',
  '٣',
  '5\u200b',
  '\u202e5',
  '1_000',
  '9007199254740993',
  '1e400',
  '99999999999999999999999',
  '-0x1',
  'NaN',
  'Infinity',
];
const DATE_TEXT = [
  'yesterday',
  '2024-13-01T00:00:00Z',
  '2024-01-01',
  '2024-01-01T25:00:00Z',
  '2024-01-01T00:00:00',
  '2024-02-30T00:00:00Z',
  '0',
  '2024-01-01T00:00:00Z\u200b',
  '\u202e2024-01-01T00:00:00Z',
];

function queryMutations(g: Gen): fc.Arbitrary<{ query: string; label: string }>[] {
  const op = g.op;
  const declared = op.queryParams.map((p) => p.name);
  const out: fc.Arbitrary<{ query: string; label: string }>[] = [];
  const valid = validQueryPairs(g);
  // A parameter nobody declared.
  out.push(
    fc
      .tuple(
        valid,
        unknownKey(declared).filter((k) => k !== '' && wellFormed(k)),
        fc.string({ maxLength: 5 }).filter(wellFormed),
      )
      .map(([pairs, k, v]) => ({ query: encodeQuery([...pairs, [k, v]]), label: `unknown query parameter ${printable(k)}` })),
  );
  out.push(
    fc
      .tuple(valid, fc.constantFrom('%ED%A0%80', '%FF', '%C0%80', '%E2%80%8B'))
      .map(([pairs, k]) => ({ query: [encodeQuery(pairs), `${k}=1`].filter(Boolean).join('&'), label: `unknown query parameter ${k}` })),
  );
  for (const p of op.queryParams) {
    const s = p.schema;
    const bad: string[] = [];
    const types = typesOf(s);
    if (types.includes('integer') || types.includes('number')) {
      bad.push(
        ...INTEGER_TEXT.filter(
          (t) =>
            !(
              types.includes('number') &&
              /^-?\d+(\.\d+)?$/.test(t) &&
              Number(t) >= (s.minimum ?? -Infinity) &&
              Number(t) <= (s.maximum ?? Infinity)
            ),
        ),
      );
      if (typeof s.minimum === 'number') bad.push(String(s.minimum - 1), '-1');
      if (typeof s.maximum === 'number') bad.push(String(s.maximum + 1));
    }
    if (Array.isArray(s.enum)) {
      const first = String(s.enum[0]);
      bad.push('', `${first}\u200b`, ` ${first}`, `${first}\u200f`, `\u202e${first}`, first.toUpperCase(), 'yes', '1', '%');
    }
    if (s.format === 'date-time') bad.push(...DATE_TEXT);
    if (typeof s.maxLength === 'number') bad.push('q'.repeat(s.maxLength + 1), `${'q'.repeat(s.maxLength)}é`);
    if (typeof s.minLength === 'number' && s.minLength > 0) bad.push('');
    const invalid = [...new Set(bad)].filter((v) => !(Array.isArray(s.enum) && s.enum.includes(v)));
    if (invalid.length > 0) {
      out.push(
        fc.tuple(valid, fc.constantFrom(...invalid)).map(([pairs, v]) => ({
          query: encodeQuery([...pairs.filter(([k]) => k !== p.name), [p.name, v]]),
          label: `bad query ${p.name}=${printable(v).slice(0, 40)}`,
        })),
      );
    }
    // The same parameter twice.
    out.push(
      g
        .valid(s, `/query/${p.name}`)
        .map(queryText)
        .filter(wellFormed)
        .map((v) => ({
          query: encodeQuery([
            [p.name, v],
            [p.name, v],
          ]),
          label: `query ${p.name} given twice`,
        })),
    );
  }
  return out;
}

function pathMutations(g: Gen, path: Record<string, PathValue>): fc.Arbitrary<{ path: Record<string, PathValue>; label: string }>[] {
  const op = g.op;
  if (op.pathParams.length === 0) return [];
  const ids = Object.entries(g.c.fx.ids);
  const segment = fc.oneof(
    // (Not `.` or `..`: a client normalises those away, so they name another route.)
    fc
      .string({ unit: textUnit, minLength: 1, maxLength: 30 })
      .filter((s) => wellFormed(s) && s !== '.' && s !== '..')
      .map(encodeURIComponent),
    fc.constantFrom(
      '%ED%A0%80',
      '%FF',
      '%C0%AF',
      '%E0%A4%A',
      '%',
      '%00',
      '%2F',
      '%2e%2e',
      '..%2F..%2Fadmin',
      '%20',
      '%E2%80%8B',
      '%E2%80%AE',
    ),
    fc.integer({ min: 200, max: 5000 }).map((n) => 'i'.repeat(n)),
    oddChar.filter(wellFormed).map((ch) => encodeURIComponent(ch)),
  );
  return [
    fc
      .tuple(
        fc.constantFrom(...op.pathParams.map((p) => p.name)),
        fc.oneof(
          segment.map((s) => ({ s, label: 'bad path segment' })),
          // An id of the right shape that names nothing, another kind's id, a changed id.
          fc
            .constantFrom(...ids)
            .chain(([key, id]) =>
              fc.constantFrom(
                { s: encodeURIComponent(`${id.split('_')[0]}_7zzzzzzzzzzzzzzzzzzzzzzzzz`), label: `unknown ${key}` },
                { s: encodeURIComponent(id.toUpperCase()), label: `upper-cased ${key}` },
                { s: encodeURIComponent(`${id}\u200b`), label: `${key} with a zero-width space` },
                { s: encodeURIComponent(` ${id}`), label: `${key} with a leading space` },
                { s: encodeURIComponent(id.slice(0, -1)), label: `truncated ${key}` },
              ),
            ),
          idLike('person').map((s) => ({ s, label: 'random id' })),
        ),
      )
      .filter(([name, { s }]) => {
        // Never the very resource the slot expects (a wrong-kind id must be wrong).
        const v = path[name];
        return !(v?.kind === 'ref' && s === encodeURIComponent(g.c.fx.ids[v.key] ?? ''));
      })
      .map(([name, { s, label }]) => ({ path: { ...path, [name]: { kind: 'raw', segment: s } }, label: `${label} in {${name}}` })),
  ];
}

function credentialMutations(op: Operation, key: string): fc.Arbitrary<{ credentials: Record<string, string>; label: string }> | undefined {
  if (op.auth.kind === 'apiKey') {
    const h = op.auth.header;
    return fc.constantFrom<{ credentials: Record<string, string>; label: string }>(
      { credentials: {}, label: 'no API key' },
      { credentials: { [h]: 'nope' }, label: 'unknown API key' },
      { credentials: { [h]: `${key}x` }, label: 'API key with an extra character' },
      { credentials: { [h]: key.toUpperCase() === key ? key.toLowerCase() : key.toUpperCase() }, label: 'API key in another case' },
      { credentials: { [h]: 'k'.repeat(600) }, label: 'overlong API key' },
      { credentials: { [h]: `${key}\u00ff` }, label: 'API key with a Latin-1 character' },
      { credentials: { authorization: `Bearer ${key}` }, label: 'API key as a bearer token' },
    );
  }
  if (op.auth.kind === 'bearer') {
    return fc.constantFrom<{ credentials: Record<string, string>; label: string }>(
      { credentials: {}, label: 'no admin token' },
      { credentials: { authorization: 'Bearer nope' }, label: 'wrong admin token' },
      { credentials: { authorization: `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}` }, label: 'basic auth' },
      { credentials: { authorization: `Bearer ${ADMIN_TOKEN}x` }, label: 'admin token with an extra character' },
      { credentials: { authorization: ADMIN_TOKEN }, label: 'admin token without Bearer' },
      { credentials: { authorization: `Bearer ${'t'.repeat(5000)}` }, label: 'overlong admin token' },
    );
  }
  return undefined;
}

function fileMutations(): fc.Arbitrary<Body & { label: string; expect?: number[] }> {
  return fc.oneof(
    fc
      .tuple(fc.uint8Array({ minLength: 1, maxLength: 300 }), fc.constantFrom(...Object.values(IMAGE_MIME)))
      .map(([bytes, ct]) => ({
        kind: 'text' as const,
        text: Buffer.from(bytes),
        contentType: ct,
        label: `random bytes as ${ct}`,
        expect: [400],
      }))
      .filter((b) => !/^(\x89PNG|\xff\xd8\xff|GIF8|RIFF)/.test(b.text.toString('latin1'))),
    fc
      .tuple(fc.constantFrom<ImageFormat>('png', 'jpeg', 'gif', 'webp'), fc.constantFrom<ImageFormat>('png', 'jpeg', 'gif', 'webp'))
      .filter(([a, b]) => a !== b)
      .map(([format, claimed]) => ({
        kind: 'image' as const,
        format,
        width: 9,
        height: 7,
        rgb: [9, 9, 9] as [number, number, number],
        contentType: IMAGE_MIME[claimed],
        label: `${format} bytes sent as ${claimed}`,
        expect: [400],
      })),
    fc
      .tuple(fc.constantFrom<ImageFormat>('png', 'jpeg', 'gif', 'webp'), fc.double({ min: 0.05, max: 0.5, noNaN: true }))
      .map(([format, cut]) => ({
        kind: 'image' as const,
        format,
        width: 64,
        height: 64,
        rgb: [200, 10, 10] as [number, number, number],
        cut,
        label: `${format} cut to ${Math.round(cut * 100)}%`,
        expect: [400],
      })),
    fc
      .constantFrom(...Object.values(IMAGE_MIME))
      .map((ct) => ({ kind: 'text' as const, text: Buffer.alloc(0), contentType: ct, label: `empty ${ct}`, expect: [400] })),
    fc.constantFrom('image/svg+xml', 'text/plain', 'application/json', 'application/pdf', 'image/bmp').map((ct) => ({
      kind: 'text' as const,
      text: ct === 'application/json' ? '{}' : '<svg/>',
      contentType: ct,
      label: `Content-Type ${ct}`,
      expect: [415],
    })),
    fc.constant<Body & { label: string; expect?: number[] }>({
      kind: 'text',
      text: Buffer.alloc(0),
      label: 'no body, no Content-Type',
      expect: [400, 415],
    }),
  );
}

/** Invalid requests for an operation: a valid one with one thing broken. */
export function invalidRequest(g: Gen): fc.Arbitrary<RequestSpec> {
  const op = g.op;
  return validRequest(g).chain((base) => {
    const options: fc.Arbitrary<RequestSpec>[] = [];
    const bodies = RAW_BODY_OPS.has(op.key) ? [fileMutations()] : bodyMutations(g, base.body);
    for (const b of bodies)
      options.push(b.map(({ label, expect, ...body }) => ({ ...base, body: body as Body, label, ...(expect ? { expect } : {}) })));
    for (const q of queryMutations(g)) options.push(q.map(({ query, label }) => ({ ...base, query, label, expect: [400] })));
    // 414 URI Too Long is a fair answer to an overlong segment.
    for (const p of pathMutations(g, base.path))
      options.push(p.map(({ path, label }) => ({ ...base, path, label, expect: [400, 404, 414] })));
    const creds = credentialMutations(op, g.c.fx.tenant.key);
    if (creds) options.push(creds.map(({ credentials, label }) => ({ ...base, credentials, label, expect: [401] })));
    return fc.oneof(...options);
  });
}

// =============================================================================================
// Properties

/** What is wrong with the answer to a valid request, if anything. */
export function checkValid(op: Operation, res: Res): string | undefined {
  if (res.status >= 500) return `a valid request got ${res.status}`;
  if (res.status >= 200 && res.status < 300) {
    if (!op.success.has(res.status)) return `${res.status} is not a declared status (declared: ${[...op.success.keys()].join(', ')})`;
    const schema = op.success.get(res.status);
    if (op.html.has(res.status)) {
      return /^text\/html/.test(String(res.headers['content-type'])) && /^<!doctype html>/.test(res.text)
        ? undefined
        : `${res.status} declares an HTML document but answered ${res.headers['content-type']}: ${clip(res.text, 200)}`;
    }
    if (schema === undefined) return res.text ? `${res.status} declares no content but the body is ${clip(res.text, 200)}` : undefined;
    if (!/^application\/json/.test(String(res.headers['content-type'])))
      return `${res.status} answered as ${res.headers['content-type']}, not application/json`;
    if (res.body === undefined) return `${res.status}: the body is not JSON`;
    const v = validator(schema);
    if (!v(res.body)) return `the ${res.status} body does not match its declared schema: ${ajvErrors(v)}`;
    return undefined;
  }
  if (res.status >= 400) return checkProblem(op, res);
  return `unexpected status ${res.status}`;
}

/** What is wrong with a problem+json answer, if anything. */
export function checkProblem(op: Operation, res: Res): string | undefined {
  if (!/^application\/problem\+json/.test(String(res.headers['content-type'])))
    return `a ${res.status} answered as ${res.headers['content-type'] ?? '(no content-type)'}, not application/problem+json`;
  const body = res.body;
  if (!body || typeof body !== 'object') return `a ${res.status} whose body is not a JSON object`;
  for (const field of PROBLEM_FIELDS) if (body[field] === undefined) return `the problem has no ${field}`;
  if (typeof body.code !== 'string' || body.status !== res.status || typeof body.requestId !== 'string') {
    return `the problem's code/status/requestId are ${JSON.stringify([body.code, body.status, body.requestId])} for a ${res.status}`;
  }
  if (res.headers['x-request-id'] !== body.requestId)
    return `the problem's requestId ${body.requestId} is not the x-request-id header ${res.headers['x-request-id']}`;
  if (op.problem) {
    const v = validator(op.problem);
    if (!v(body)) return `the problem does not match the declared 4XX schema: ${ajvErrors(v)}`;
  }
  return undefined;
}

export function checkInvalid(op: Operation, spec: RequestSpec, res: Res): string | undefined {
  if (res.status < 400 || res.status >= 500) return `an invalid request (${spec.label}) got ${res.status}, not a 4xx`;
  const problem = checkProblem(op, res);
  if (problem) return problem;
  if (spec.expect && !spec.expect.includes(res.status)) return `${spec.label}: expected ${spec.expect.join(' or ')}, got ${res.status}`;
  return undefined;
}

export interface OpResult {
  op: string;
  kind: Kind;
  seed: number;
  runs: number;
  statuses: Record<number, number>;
  success: number;
  labels: Record<string, number>;
  /** Valid requests refused (4xx), by status and detail: business rules, for tuning the hints. */
  refusals: Record<string, number>;
  failures: string[];
  ms: number;
}

/** A seed of its own for each operation and kind, from the run's seed. */
export function opSeed(seed: number, op: Operation, kind: Kind): number {
  let h = 0x811c9dc5 ^ seed;
  for (const ch of `${kind} ${op.key}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193);
  return h | 0;
}

export interface FuzzOptions {
  runs: number;
  seed: number;
  /** Record every distinct failure and go on (long runs), rather than stop at the first. */
  keepGoing?: boolean;
  /** Shrink a failing request to a smaller one (slower). */
  shrink?: boolean;
}

/** Runs one property (valid or invalid requests) over one operation. */
export async function fuzzOperation(c: Ctx, op: Operation, kind: Kind, options: FuzzOptions): Promise<OpResult> {
  const g = new Gen(c, op);
  const seed = opSeed(options.seed, op, kind);
  const result: OpResult = { op: op.key, kind, seed, runs: 0, statuses: {}, success: 0, labels: {}, refusals: {}, failures: [], ms: 0 };
  const seen = new Set<string>();
  const started = Date.now();
  const arb = kind === 'valid' ? validRequest(g) : invalidRequest(g);
  const property = fc.asyncProperty(arb, async (spec) => {
    if (kind === 'valid' && spec.body.kind === 'json' && op.body) {
      const v = validator(op.body.schema);
      if (!v(JSON.parse(toJsonText(spec.body.value))))
        throw new Error(
          `fuzzer bug: a "valid" body does not match the request schema: ${ajvErrors(v)}\n${toJsonText(spec.body.value).slice(0, 500)}`,
        );
    }
    const ex = await send(c, spec);
    result.runs++;
    result.statuses[ex.res.status] = (result.statuses[ex.res.status] ?? 0) + 1;
    if (ex.res.status >= 200 && ex.res.status < 300) result.success++;
    else if (kind === 'valid' && ex.res.status < 500) {
      const refusal = `${ex.res.status} ${String(ex.res.body?.detail ?? '')
        .replace(/"[^"]*"/g, '"…"')
        .slice(0, 100)}`;
      result.refusals[refusal] = (result.refusals[refusal] ?? 0) + 1;
    }
    if (kind === 'invalid') {
      const family = spec.label.split(' at ')[0]!.split(' in {')[0]!;
      result.labels[family] = (result.labels[family] ?? 0) + 1;
    }
    const wrong = kind === 'valid' ? checkValid(op, ex.res) : checkInvalid(op, spec, ex.res);
    if (wrong === undefined) return;
    const message = `${op.key} (${kind}${kind === 'invalid' ? `: ${spec.label}` : ''}): ${wrong}\n--- request\n${describeRequest(ex.req)}\n--- response\n${describeResponse(ex.res)}`;
    if (!options.keepGoing) throw new Error(message);
    const signature = `${ex.res.status} ${wrong.replace(/[0-9a-z]{26}/g, '…').slice(0, 120)}`;
    if (!seen.has(signature)) {
      seen.add(signature);
      result.failures.push(message);
    }
  });
  const details = await fc.check(property, { seed, numRuns: options.runs, endOnFailure: !options.shrink });
  if (details.failed) {
    const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    result.failures.push(
      `${error}\n--- reproduce: FUZZ_SEED=${options.seed} (${op.key} ${kind}: fast-check seed ${seed}, path ${details.counterexamplePath}, run ${details.numRuns})`,
    );
  }
  result.ms = Date.now() - started;
  return result;
}

/**
 * Every operation of the document (but the skipped ones), each in a tenant of its own with a
 * fixture of its own, valid requests then invalid ones.
 */
export async function fuzzAll(
  t: TestApp,
  receiver: Receiver,
  ops: Operation[],
  options: Omit<FuzzOptions, 'runs'> & {
    validRuns: number;
    invalidRuns: number;
    kinds?: Kind[];
    timeoutMs?: number;
    onResult?: (r: OpResult) => void;
  },
): Promise<OpResult[]> {
  const results: OpResult[] = [];
  for (const op of ops) {
    if (skipReason(op)) continue;
    const tenant = await t.newTenant(`Fuzz ${op.key}`);
    const c = await buildFixture(t, receiver, tenant, unique('fz'), options.timeoutMs);
    for (const kind of options.kinds ?? ['valid', 'invalid']) {
      const runs = kind === 'valid' ? options.validRuns : options.invalidRuns;
      const r = await fuzzOperation(c, op, kind as Kind, { ...options, runs });
      results.push(r);
      options.onResult?.(r);
    }
  }
  return results;
}

/** The share of valid requests each operation must answer with a 2xx. */
export const MIN_SUCCESS_SHARE = 0.3;

export function summary(r: OpResult): string {
  const statuses = Object.entries(r.statuses)
    .map(([s, n]) => `${s}×${n}`)
    .join(' ');
  const share = r.runs > 0 ? Math.round((r.success / r.runs) * 100) : 0;
  return `${r.kind.padEnd(7)} ${r.op.padEnd(90)} ${String(r.runs).padStart(6)} runs ${String(share).padStart(3)}% 2xx  ${statuses}  (${r.ms} ms)`;
}
