import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startApp, type Json, type Res } from './helpers.js';
import {
  buildFixture,
  checkProblem,
  describeRequest,
  describeResponse,
  fixtureKeyFor,
  fuzzEnv,
  Gen,
  loadDocument,
  minimalRequest,
  minimalVariants,
  operationsOf,
  send,
  startReceiver,
  toJsonText,
  type Ctx,
  type Operation,
  type PathValue,
  type RequestSpec,
  type Schema,
} from './fuzz/contract.js';

// The isolation sweep (issue 8): tenant A makes one of everything; tenant B then tries A's ids in
// every operation of the OpenAPI document that takes a tenant's API key. Path parameters naming
// A's resources must get 404 (never a 2xx, a 403 or a 409), alone or mixed with B's own ids; body
// and query fields referring to A's resources must be refused; A's resources must be absent from
// every list and search of B; and A's resources must come out of the sweep unchanged. The
// operations are read from /openapi.json, so new ones are swept without touching this file.

const MARK_A = 'alphaqzx';
const MARK_B = 'bravoqzx';
/** Ids as the service makes them (TypeID style). */
const ID = /\b[a-z]{1,16}_[0-9a-hjkmnp-tv-z]{26}\b/g;
/** Body fields stored as given, never resolved: another tenant's id there is just a string. */
const OPAQUE = [/\/actionCardWidgets\/\*\/logos\/\*\/image\/(fileId|assetId)$/];

const receiver = await startReceiver();
const t = await startApp(fuzzEnv());
const ops: Operation[] = operationsOf(await loadDocument(t));
/** Operations of a tenant: those that take the tenant's API key (not the admin API, not signed links). */
const tenantOps = ops.filter((op) => op.auth.kind === 'apiKey');

let A: Ctx;
let B: Ctx;
/** Every id that appeared in A's fixture, and A's marker: none may reach B. */
let secretsOfA: string[];
let snapshotBefore: Map<string, string>;

before(async () => {
  A = await buildFixture(t, receiver, await t.newTenant('Tenant A'), MARK_A);
  B = await buildFixture(t, receiver, await t.newTenant('Tenant B'), MARK_B);
  const ids = new Set<string>([...Object.values(A.fx.ids), ...(JSON.stringify(A.fx.responses).match(ID) ?? [])]);
  const ofB = new Set<string>([...Object.values(B.fx.ids), ...(JSON.stringify(B.fx.responses).match(ID) ?? [])]);
  for (const id of ids) assert.ok(!ofB.has(id), `the fixtures share ${id}`);
  secretsOfA = [...ids, MARK_A];
  snapshotBefore = await snapshot(A);
});
after(async () => {
  await t.close();
  await receiver.close();
});

/** The path with each parameter taken from A (when in `fromA`) or from B. */
function pathFrom(op: Operation, fromA: Set<string>): Record<string, PathValue> {
  const out: Record<string, PathValue> = {};
  for (const p of op.pathParams) {
    const key = fixtureKeyFor(p.name, A.fx.ids);
    assert.ok(key, `${op.key}: no fixture for path parameter ${p.name}; add a maker to MAKERS in test/fuzz/contract.ts`);
    const id = (fromA.has(p.name) ? A : B).fx.ids[key];
    assert.ok(id, `no fixture id ${key}`);
    out[p.name] = { kind: 'raw', segment: encodeURIComponent(id) };
  }
  return out;
}

/** The secrets of A in a response, if any. */
function leaks(res: Res, sent: string[] = []): string[] {
  const text = res.text ?? '';
  return secretsOfA.filter((s) => text.includes(s) && !sent.includes(s));
}

function report(spec: RequestSpec, ex: { req: Parameters<typeof describeRequest>[0]; res: Res }, what: string): string {
  return `${spec.op.key}: ${what}\n--- request (as tenant B)\n${describeRequest(ex.req)}\n--- response\n${describeResponse(ex.res)}`;
}

/** What every GET of A answers, by operation: A's view of its own data. */
async function snapshot(c: Ctx): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const op of tenantOps.filter((o) => o.method === 'GET')) {
    const spec = { ...minimalRequest(new Gen(c, op)), path: pathFromOwn(op, c) };
    const ex = await send(c, spec);
    assert.equal(ex.res.status, 200, `A's own ${op.key}: ${describeResponse(ex.res)}`);
    // Signed download and preview links carry a fresh expiry each time; the realtime answer says since when, five minutes ago;
    // an integration's own background sync (to a CRM this test cannot reach) moves its sync fields.
    out.set(
      op.key,
      ex.res.text
        .replace(
          /"lastSyncAt":(null|"[^"]*"),"lastError":(null|"(?:[^"\\]|\\.)*"),"lastErrorAt":(null|"[^"]*"),"nextSyncAt":(null|"[^"]*")/g,
          '"sync":"…"',
        )
        .replace(/(expires=)\d+(&signature=)[\w-]+/g, '$1…$2…')
        .replace(/(\/previews\/[^"]*","expiresAt":")[^"]*"/g, '$1…"')
        .replace(/^\{"since":"[^"]*"/, '{"since":"…"'),
    );
  }
  return out;
}

function pathFromOwn(op: Operation, c: Ctx): Record<string, PathValue> {
  return Object.fromEntries(
    op.pathParams.map((p) => [
      p.name,
      { kind: 'raw', segment: encodeURIComponent(c.fx.ids[fixtureKeyFor(p.name, c.fx.ids) ?? ''] ?? 'missing') },
    ]),
  );
}

type Seg = string;

/** Body fields (at any depth, `*` for array items) whose name says they refer to a resource of the tenant. */
function namedRefs(schema: Schema, ids: Record<string, string>, path: Seg[] = []): { path: Seg[]; key: string }[] {
  const out: { path: Seg[]; key: string }[] = [];
  const s = schema ?? {};
  for (const [name, ps] of Object.entries((s.properties ?? {}) as Record<string, Schema>)) {
    const key = fixtureKeyFor(name, ids);
    const types = Array.isArray(ps?.type) ? ps.type : [ps?.type];
    if (key && types.includes('string')) out.push({ path: [...path, name], key });
    out.push(...namedRefs(ps, ids, [...path, name]));
  }
  if (s.items) out.push(...namedRefs(s.items, ids, [...path, '*']));
  return out;
}

/** String fields of a value that hold one of B's fixture ids. */
function valueRefs(value: unknown, byId: Map<string, string>, path: Seg[] = []): { path: Seg[]; key: string }[] {
  if (typeof value === 'string') return byId.has(value) ? [{ path, key: byId.get(value)! }] : [];
  if (Array.isArray(value)) return value.slice(0, 1).flatMap((v) => valueRefs(v, byId, [...path, '*']));
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => valueRefs(v, byId, [...path, k]));
  return [];
}

/** `value` with `leaf` at `path`, parents made as the schema says (array items: the first one). */
function put(g: Gen, schema: Schema, value: unknown, path: Seg[], leaf: unknown, ptr = '/body'): unknown {
  if (path.length === 0) return leaf;
  const [head, ...rest] = path as [Seg, ...Seg[]];
  const s = schema ?? {};
  if (head === '*') {
    const items = s.items ?? {};
    const list = Array.isArray(value) ? [...value] : [];
    const first = list.length > 0 ? list[0] : g.minimal(items, `${ptr}/*`);
    list[0] = put(g, items, first, rest, leaf, `${ptr}/*`);
    return list;
  }
  const obj = value !== null && typeof value === 'object' && !Array.isArray(value) ? { ...(value as Json) } : {};
  const child = s.properties?.[head] ?? {};
  const current = obj[head] !== undefined ? obj[head] : rest.length > 0 ? g.minimal(child, `${ptr}/${head}`) : undefined;
  obj[head] = put(g, child, current, rest, leaf, `${ptr}/${head}`);
  return obj;
}

describe('tenant isolation', () => {
  test('the sweep has operations to cover', { timeout: 10_000 }, () => {
    assert.ok(tenantOps.filter((op) => op.pathParams.length > 0).length >= 30, 'operations with path parameters');
    assert.ok(tenantOps.filter((op) => op.method === 'GET' && op.pathParams.length === 0).length >= 9, 'lists and searches');
  });

  test("every operation with path parameters answers 404 to another tenant's ids, alone or mixed with its own", {
    timeout: 120_000,
  }, async () => {
    const problems: string[] = [];
    let checked = 0;
    for (const op of tenantOps.filter((o) => o.pathParams.length > 0)) {
      const base = minimalRequest(new Gen(B, op));
      const names = op.pathParams.map((p) => p.name);
      // Every non-empty subset of the parameters taken from A, the others from B.
      for (let mask = 1; mask < 2 ** names.length; mask++) {
        const fromA = new Set(names.filter((_n, i) => mask & (2 ** i)));
        const spec: RequestSpec = { ...base, path: pathFrom(op, fromA), label: `A's ${[...fromA].join(', ')}` };
        const ex = await send(B, spec);
        checked++;
        const problem = checkProblem(op, ex.res);
        if (ex.res.status !== 404)
          problems.push(report(spec, ex, `with A's ${[...fromA].join(' and ')}: expected 404, got ${ex.res.status}`));
        else if (problem) problems.push(report(spec, ex, problem));
        else if (leaks(ex.res).length > 0) problems.push(report(spec, ex, `the 404 reveals ${leaks(ex.res).join(', ')}`));
      }
    }
    assert.ok(checked >= 60, `only ${checked} requests`);
    assert.equal(problems.length, 0, `${problems.length} cross-tenant request(s) not answered 404:\n\n${problems.join('\n\n')}`);
  });

  /**
   * Reads in which B's fixture has nothing of its own to show, and why their isolation holds:
   * without them the check below would prove nothing there, and says so.
   */
  const NOTHING_OF_ITS_OWN: Record<string, string> = {
    'GET /v0/agent': "the service's generator and model: no tenant resource at all",
    'GET /v0/analytics/pipeline':
      "B's fixture deal has no touching visit; test/deals/pipeline.test.ts checks the report's tenant isolation",
    'GET /v0/alerts/{alert_id}/messages': "the fixture alert sent no message; the alert's id is in the 404 sweep above",
    'GET /v0/pages/{page_id}/heatmap':
      "counts and sections of the page in the path, no ids; the page's id is in the 404 sweep above, test/analytics/heatmap.test.ts checks the counts",
  };

  test("A's resources are absent from every list and search of B", { timeout: 120_000 }, async () => {
    const problems: string[] = [];
    // Every read that answers JSON (a page's HTML preview is checked by the 404 sweep above and in test/site).
    for (const op of tenantOps.filter((o) => o.method === 'GET' && o.success.get(200) !== undefined)) {
      const g = new Gen(B, op);
      const base: RequestSpec = { ...minimalRequest(g), path: pathFromOwn(op, B) };
      const declared = new Set(op.queryParams.map((p) => p.name));
      const queries: string[] = [''];
      if (declared.has('limit')) queries.push('limit=100');
      if (declared.has('query')) queries.push(`query=${MARK_A}`, `query=${MARK_A.slice(0, 3)}`, `query=${MARK_B}`, 'query=a');
      // Events are filtered by their type; log timelines by a kebab-case type of the client's; a
      // declared enum (the heatmap's kinds) by each of its values.
      const typeEnum = op.queryParams.find((p) => p.name === 'type')?.schema.enum as string[] | undefined;
      if (typeEnum) queries.push(...typeEnum.map((v) => `type=${encodeURIComponent(v)}`));
      else if (declared.has('type'))
        queries.push(...(op.path === '/v0/events' ? ['type=page.created', 'type=webhook.test'] : ['type=note-added']));
      if (declared.has('targetType')) queries.push('targetType=page', 'targetType=audience');
      let sawOwn = false;
      for (const query of queries) {
        let q = query;
        // Every page of the list, following nextCursor.
        for (let page = 0; page < 20; page++) {
          const spec: RequestSpec = { ...base, query: q, label: `list ${q}` };
          const ex = await send(B, spec);
          if (ex.res.status !== 200) {
            problems.push(report(spec, ex, `B's own list answered ${ex.res.status}`));
            break;
          }
          const leaked = leaks(ex.res);
          if (leaked.length > 0) problems.push(report(spec, ex, `B sees A's ${leaked.join(', ')}`));
          if (Object.values(B.fx.ids).some((id) => ex.res.text.includes(id))) sawOwn = true;
          const next = ex.res.body?.nextCursor;
          if (typeof next !== 'string') break;
          q = [query.replace(/(^|&)cursor=[^&]*/, ''), `cursor=${encodeURIComponent(next)}`].filter(Boolean).join('&');
        }
      }
      // The lists are not vacuously clean: B sees its own resources in each.
      if (!sawOwn && !(op.key in NOTHING_OF_ITS_OWN))
        problems.push(`${op.key}: none of B's own resources appear in B's answers, so the check proves nothing`);
    }
    assert.equal(problems.length, 0, `${problems.length} problem(s):\n\n${problems.join('\n\n')}`);
  });

  test("body and query fields referring to another tenant's resources are refused", { timeout: 120_000 }, async (tt) => {
    const problems: string[] = [];
    const skipped: string[] = [];
    let checked = 0;
    const byIdB = new Map(Object.entries(B.fx.ids).map(([k, v]) => [v, k]));
    for (const op of tenantOps) {
      const g = new Gen(B, op);
      const base: RequestSpec = { ...minimalRequest(g), path: pathFromOwn(op, B) };
      const cases: { label: string; forB: RequestSpec; forA: RequestSpec; sent: string; opaque: boolean }[] = [];
      if (op.body && base.body.kind === 'json') {
        const schema = op.body.schema;
        // Made anew for each request: minimal values may have to be unique (a link's path, ...).
        const variant = (i: number) => minimalVariants(g, schema, '/body')[i];
        for (const [i, first] of minimalVariants(g, schema, '/body').entries()) {
          const refs = [...namedRefs(schema, B.fx.ids), ...valueRefs(first, byIdB)];
          const seen = new Set<string>();
          for (const ref of refs) {
            const ptr = `/${ref.path.join('/')}`;
            if (seen.has(ptr)) continue;
            seen.add(ptr);
            const idA = A.fx.ids[ref.key];
            const idB = B.fx.ids[ref.key];
            if (!idA || !idB) continue;
            cases.push({
              label: `body ${ptr} (${toJsonText(first).slice(0, 80)})`,
              forB: { ...base, body: { kind: 'json', value: put(g, schema, variant(i), ref.path, idB) } },
              forA: { ...base, body: { kind: 'json', value: put(g, schema, variant(i), ref.path, idA) } },
              sent: idA,
              opaque: OPAQUE.some((o) => o.test(ptr)),
            });
          }
        }
      }
      for (const p of op.queryParams) {
        const key = fixtureKeyFor(p.name, B.fx.ids);
        if (!key || !A.fx.ids[key]) continue;
        const q = (id: string) => [base.query, `${encodeURIComponent(p.name)}=${encodeURIComponent(id)}`].filter(Boolean).join('&');
        cases.push({
          label: `query ${p.name}`,
          forB: { ...base, query: q(B.fx.ids[key]!) },
          forA: { ...base, query: q(A.fx.ids[key]!) },
          sent: A.fx.ids[key]!,
          opaque: false,
        });
      }
      for (const c of cases) {
        // The same request with B's own id must work, or the check proves nothing.
        const own = await send(B, c.forB);
        if (own.res.status < 200 || own.res.status > 299) {
          skipped.push(`${op.key} ${c.label}: B's own id gets ${own.res.status} ${String(own.res.body?.detail ?? '').slice(0, 100)}`);
          continue;
        }
        checked++;
        tt.diagnostic(`checked: ${op.key} ${c.label}`);
        const ex = await send(B, c.forA);
        const leaked = leaks(ex.res, c.opaque ? [c.sent] : []);
        const ok2xx = ex.res.status >= 200 && ex.res.status < 300;
        if (ok2xx && (c.opaque || op.method === 'GET')) {
          // Stored as given (opaque), or a filter that finds nothing of B's: fine, if nothing of A shows.
          if (leaked.length > 0) problems.push(report(c.forA, ex, `${c.label} with A's id reveals ${leaked.join(', ')}`));
        } else if (![400, 404, 422].includes(ex.res.status)) {
          problems.push(report(c.forA, ex, `${c.label} with A's id: expected 400, 404 or 422, got ${ex.res.status}`));
        } else {
          const problem = checkProblem(op, ex.res);
          if (problem) problems.push(report(c.forA, ex, problem));
          else if (leaked.length > 0) problems.push(report(c.forA, ex, `the ${ex.res.status} reveals ${leaked.join(', ')}`));
        }
      }
    }
    for (const s of skipped) tt.diagnostic(`not checked: ${s}`);
    assert.ok(checked >= 8, `only ${checked} references checked`);
    assert.equal(problems.length, 0, `${problems.length} cross-tenant reference(s) accepted:\n\n${problems.join('\n\n')}`);
  });

  test("A's resources come out of the sweep unchanged", { timeout: 60_000 }, async () => {
    const now = await snapshot(A);
    const changed = [...snapshotBefore.keys()].filter((k) => snapshotBefore.get(k) !== now.get(k));
    assert.deepEqual(
      changed,
      [],
      changed.map((k) => `${k}\n  before: ${snapshotBefore.get(k)?.slice(0, 600)}\n  after:  ${now.get(k)?.slice(0, 600)}`).join('\n'),
    );
  });
});
