import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startApp, type Json, type Res, type TestApp } from '../helpers.js';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** The reference's endpoints 14-19, and the extensions of this issue, by path: method → reference or extension. */
// The reference's paths, and the extensions (issue 14 added the everyday operations).
const EXPECTED: Record<string, Record<string, 'reference' | 'extension'>> = {
  '/v0/persons': { post: 'reference', get: 'extension' },
  '/v0/persons/search': { get: 'extension' },
  '/v0/persons/{person_id}': { get: 'reference', patch: 'reference', delete: 'extension' },
  '/v0/persons/{person_id}/logs': { post: 'extension', get: 'extension' },
  '/v0/persons/{person_id}/logs/{person_log_id}': { get: 'reference', patch: 'extension', delete: 'extension' },
  '/v0/accounts': { post: 'extension' },
  '/v0/accounts/search': { get: 'reference' },
  '/v0/accounts/{account_id}': { get: 'extension', patch: 'extension', delete: 'extension' },
  '/v0/accounts/{account_id}/logs': { post: 'extension', get: 'extension' },
  '/v0/accounts/{account_id}/logs/{account_log_id}': { get: 'reference', patch: 'extension', delete: 'extension' },
  '/v0/pages': { get: 'reference', post: 'extension' },
  '/v0/pages/{page_id}': { get: 'extension', patch: 'reference', delete: 'extension' },
  '/v0/pages/{page_id}/preview': { get: 'extension', post: 'extension' },
  '/v0/pages/{page_id}/preview_link': { get: 'extension' },
  '/v0/pages/{page_id}/regenerate': { post: 'extension' },
  '/v0/pages/{page_id}/analytics': { get: 'extension' },
  '/v0/analytics/pages': { get: 'extension' },
  '/v0/analytics/site': { get: 'extension' },
  '/v0/analytics/realtime': { get: 'extension' },
  '/v0/site_settings': { get: 'extension', patch: 'extension' },
  '/v0/leads': { get: 'extension' },
  '/v0/api_key': { get: 'extension' },
  '/v0/pages/{page_id}/audiences': { get: 'reference', post: 'extension' },
  '/v0/pages/{page_id}/audiences/{audience_id}': { get: 'reference', patch: 'extension' },
  '/v0/pages/{page_id}/audiences/{audience_id}/archive': { post: 'extension' },
  '/v0/pages/{page_id}/audiences/{audience_id}/restore': { post: 'extension' },
  '/v0/pages/{page_id}/audiences/{audience_id}/versions': { post: 'extension', get: 'extension' },
  '/v0/pages/{page_id}/audiences/{audience_id}/versions/{version_id}': { get: 'reference', patch: 'extension' },
  '/v0/pages/{page_id}/audiences/{audience_id}/versions/{version_id}/cancel': { post: 'reference' },
  '/v0/pages/{page_id}/audiences/{audience_id}/versions/{version_id}/restore': { post: 'extension' },
  '/v0/pages/{page_id}/audience_sessions': { get: 'reference', post: 'extension' },
  '/v0/audiences/search': { get: 'reference' },
  '/v0/files': { post: 'extension' },
  '/v0/assets': { post: 'reference', get: 'extension' },
  '/v0/assets/{asset_id}': { get: 'reference', patch: 'extension', delete: 'extension' },
  '/v0/topics': { get: 'reference', post: 'reference' },
  '/v0/topics/{topic_id}': { get: 'extension', patch: 'extension', delete: 'extension' },
  '/v0/topics/{topic_id}/entries': { get: 'reference', post: 'extension' },
  '/v0/topics/{topic_id}/entries/{topic_entry_id}': { get: 'extension', patch: 'extension', delete: 'extension' },
  '/v0/tenant_domains': { get: 'extension', post: 'extension' },
  '/v0/tenant_domains/{tenant_domain_id}': { delete: 'extension' },
  '/v0/tenant_domains/{tenant_domain_id}/verify': { post: 'extension' },
  '/v0/pages/{page_id}/experiments': { post: 'extension', get: 'extension' },
  '/v0/pages/{page_id}/experiments/{experiment_id}': { get: 'extension', patch: 'extension', delete: 'extension' },
  '/v0/pages/{page_id}/experiments/{experiment_id}/start': { post: 'extension' },
  '/v0/pages/{page_id}/experiments/{experiment_id}/conclude': { post: 'extension' },
  '/v0/pages/{page_id}/experiments/{experiment_id}/results': { get: 'extension' },
  '/v0/page_links': { post: 'extension' },
  '/v0/page_links/search': { get: 'reference' },
  '/v0/page_links/{page_link_id}': { patch: 'extension', delete: 'extension' },
  '/v0/webhook_subscriptions': { get: 'reference', post: 'extension' },
  '/v0/webhook_subscriptions/{subscription_id}': { get: 'extension', patch: 'extension', delete: 'extension' },
  '/v0/webhook_subscriptions/{subscription_id}/rotate_secret': { post: 'extension' },
  '/v0/webhook_subscriptions/{subscription_id}/deliveries': { get: 'extension' },
  '/v0/webhook_subscriptions/{subscription_id}/deliveries/{delivery_id}/retry': { post: 'extension' },
  '/v0/webhook_subscriptions/{subscription_id}/test': { post: 'extension' },
  '/v0/events': { get: 'extension' },
  '/v0/events/{event_id}': { get: 'extension' },
  '/v0/goals': { get: 'extension', post: 'extension' },
  '/v0/goals/{goal_id}': { get: 'extension', patch: 'extension', delete: 'extension' },
  '/v0/funnels': { get: 'extension', post: 'extension' },
  '/v0/funnels/{funnel_id}': { get: 'extension', patch: 'extension', delete: 'extension' },
  '/v0/funnels/{funnel_id}/results': { get: 'extension' },
  '/v0/sites': { get: 'extension', post: 'extension' },
  '/v0/sites/{site_id}': { get: 'extension', patch: 'extension', delete: 'extension' },
  '/v0/experiences': { get: 'extension', post: 'extension' },
  '/v0/experiences/{experience_id}': { get: 'extension', patch: 'extension', delete: 'extension' },
  '/v0/experiences/{experience_id}/analytics': { get: 'extension' },
  '/v0/experiences/{experience_id}/preview-tokens': { post: 'extension' },
  '/v0/sites/{site_id}/pick-tokens': { post: 'extension' },
  '/v0/pages/{page_id}/heatmap': { get: 'extension' },
  '/v0/agent': { get: 'extension' },
  '/v0/templates': { get: 'extension', post: 'extension' },
  '/v0/templates/{template_id}': { get: 'extension', patch: 'extension', delete: 'extension' },
  '/v0/deals': { get: 'extension', post: 'extension' },
  '/v0/deals/{deal_id}': { get: 'extension', delete: 'extension' },
  '/v0/analytics/pipeline': { get: 'extension' },
  '/v0/integrations': { get: 'extension', post: 'extension' },
  '/v0/integrations/{integration_id}': { get: 'extension', patch: 'extension', delete: 'extension' },
  '/v0/integrations/{integration_id}/sync': { post: 'extension' },
  '/v0/alerts': { get: 'extension', post: 'extension' },
  '/v0/alerts/{alert_id}': { get: 'extension', patch: 'extension', delete: 'extension' },
  '/v0/alerts/{alert_id}/messages': { get: 'extension' },
  '/v0/alerts/{alert_id}/test': { post: 'extension' },
};

let t: TestApp;
let res: Res;
let doc: Json;
before(async () => {
  t = await startApp();
  res = await t.req('GET', '/openapi.json', undefined, { key: null });
  doc = res.body;
});
after(async () => {
  await t.close();
});

/** Follows a local `$ref` (`#/components/schemas/X`), if the schema is one. */
function deref(schema: Json): Json {
  let s = schema;
  for (let i = 0; i < 10 && s && typeof s.$ref === 'string'; i++) {
    assert.match(s.$ref, /^#\//, `only local refs: ${s.$ref}`);
    s = s.$ref
      .slice(2)
      .split('/')
      .reduce((node: Json, part: string) => node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
    assert.ok(s, `dangling $ref ${schema.$ref}`);
  }
  return s;
}

function operation(path: string, method: string): Json {
  const op = doc.paths?.[path]?.[method];
  assert.ok(op, `${method.toUpperCase()} ${path} is in the document`);
  return op;
}

/** The JSON schema of an operation's response `status` as application/json. */
function responseSchema(path: string, method: string, status: string): Json {
  const response = deref(operation(path, method).responses?.[status]);
  assert.ok(response, `${method.toUpperCase()} ${path} declares ${status}`);
  const schema = response.content?.['application/json']?.schema;
  assert.ok(schema, `${method.toUpperCase()} ${path} ${status} has an application/json schema`);
  return deref(schema);
}

function pathParams(path: string, method: string): Json[] {
  const op = operation(path, method);
  const shared = (doc.paths[path].parameters ?? []) as Json[];
  return [...shared, ...((op.parameters ?? []) as Json[])].map(deref).filter((p) => p.in === 'path');
}

const placeholders = (path: string) => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);

describe('GET /openapi.json', () => {
  test('is served without a key, as JSON, and is OpenAPI 3.1.x', () => {
    assert.equal(res.status, 200, res.text.slice(0, 500));
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.ok(res.headers['x-request-id']);
    assert.match(doc.openapi, /^3\.1\.\d+$/);
    assert.equal(typeof doc.info?.title, 'string');
    assert.equal(typeof doc.info?.version, 'string');
    assert.equal(typeof doc.paths, 'object');
  });

  test('is the same document with a key', async () => {
    const withKey = await t.req('GET', '/openapi.json');
    assert.equal(withKey.status, 200);
    assert.deepEqual(withKey.body, doc);
  });

  test('declares the x-api-key header scheme and applies it to /v0', () => {
    const schemes = doc.components?.securitySchemes ?? {};
    const apiKey = Object.entries(schemes).find(([, s]) => (s as Json).type === 'apiKey');
    assert.ok(apiKey, JSON.stringify(schemes));
    assert.deepEqual({ in: (apiKey[1] as Json).in, name: (apiKey[1] as Json).name }, { in: 'header', name: 'x-api-key' });
    const name = apiKey[0];
    for (const [path, methods] of Object.entries(EXPECTED)) {
      for (const method of Object.keys(methods)) {
        const security = operation(path, method).security ?? doc.security;
        assert.ok(Array.isArray(security) && security.some((req: Json) => name in req), `${method.toUpperCase()} ${path} requires ${name}`);
      }
    }
  });
});

describe('paths, methods and path parameters', () => {
  test('the reference paths 14-19 and the extension paths exist with exactly the right methods', () => {
    for (const [path, methods] of Object.entries(EXPECTED)) {
      const item = doc.paths[path];
      assert.ok(item, `${path} is in the document; it has ${Object.keys(doc.paths).join(', ')}`);
      const present = Object.keys(item)
        .filter((k) => HTTP_METHODS.includes(k) && k !== 'head' && k !== 'options')
        .sort();
      assert.deepEqual(present, Object.keys(methods).sort(), path);
    }
  });

  test('no path is written the Fastify way (:param) and no /v0 path is outside the expected set', () => {
    for (const path of Object.keys(doc.paths)) {
      assert.ok(!path.includes(':'), path);
      if (path.startsWith('/v0/')) assert.ok(path in EXPECTED, `unexpected ${path}`);
    }
  });

  test("each operation declares exactly the path parameters of its template, by the reference's names, required strings", () => {
    for (const [path, methods] of Object.entries(EXPECTED)) {
      for (const method of Object.keys(methods)) {
        const params = pathParams(path, method);
        assert.deepEqual(params.map((p) => p.name).sort(), placeholders(path).sort(), `${method.toUpperCase()} ${path}`);
        for (const p of params) {
          assert.equal(p.required, true, `${p.name} is required`);
          assert.equal(deref(p.schema).type, 'string', `${p.name} is a string`);
        }
      }
    }
    assert.deepEqual(placeholders('/v0/persons/{person_id}/logs/{person_log_id}'), ['person_id', 'person_log_id']);
  });

  test('account_id carries the reference pattern ^account_[a-z0-9]{26}$', () => {
    for (const path of ['/v0/accounts/{account_id}/logs/{account_log_id}']) {
      const accountId = pathParams(path, 'get').find((p) => p.name === 'account_id');
      assert.equal(deref(accountId.schema).pattern, '^account_[a-z0-9]{26}$');
    }
    const post = pathParams('/v0/accounts/{account_id}/logs', 'post').find((p) => p.name === 'account_id');
    assert.equal(deref(post.schema).pattern, '^account_[a-z0-9]{26}$');
  });

  test('the search query parameters are declared: query, includeEmptyOnly, cursor, limit', () => {
    const params = ((operation('/v0/accounts/search', 'get').parameters ?? []) as Json[]).map(deref).filter((p) => p.in === 'query');
    assert.deepEqual(params.map((p) => p.name).sort(), ['cursor', 'includeEmptyOnly', 'limit', 'query']);
    const limit = deref(params.find((p) => p.name === 'limit').schema);
    assert.equal(limit.type, 'integer');
    assert.equal(limit.minimum, 1);
    assert.equal(limit.maximum, 100);
  });
});

describe('extension operations', () => {
  test('the extension operations are marked x-extension: true and the reference ones are not', () => {
    for (const [path, methods] of Object.entries(EXPECTED)) {
      for (const [method, kind] of Object.entries(methods)) {
        const marked = operation(path, method)['x-extension'];
        if (kind === 'extension') assert.equal(marked, true, `${method.toUpperCase()} ${path} is an extension`);
        else assert.equal(marked, undefined, `${method.toUpperCase()} ${path} is a reference endpoint`);
      }
    }
  });

  test('no operation is listed twice in /docs by a second "extension" tag', () => {
    assert.ok(!((doc.tags ?? []) as { name: string }[]).some((x) => x.name === 'extension'));
    for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
      for (const [method, op] of Object.entries(item)) {
        if (HTTP_METHODS.includes(method)) assert.ok(!((op as Json).tags ?? []).includes('extension'), `${method.toUpperCase()} ${path}`);
      }
    }
  });
});

describe('operation ids and named schemas', () => {
  const operations = () =>
    Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => HTTP_METHODS.includes(method))
        .map(([method, op]) => ({ path, method, op: op as Json })),
    );

  test('every operation has an operationId, unique in the document', () => {
    const ids = operations().map(({ path, method, op }) => {
      assert.match(String(op.operationId), /^[a-z][A-Za-z]+$/, `${method.toUpperCase()} ${path}`);
      return op.operationId;
    });
    assert.equal(new Set(ids).size, ids.length);
  });

  test("the reference's shapes and the problem are components under their own names", () => {
    const names = Object.keys(doc.components.schemas);
    for (const name of [
      'Page',
      'Action',
      'ActionCardWidget',
      'FooterLinkGroup',
      'Script',
      'Metadata',
      'Audience',
      'AudienceVersion',
      'AudienceSession',
      'AudienceSearchItem',
      'Asset',
      'Topic',
      'TopicEntry',
      'Person',
      'PersonLog',
      'AccountLog',
      'PageLink',
      'Account',
      'WebhookSubscription',
      'Problem',
      'PersonCreate',
      'PersonUpdate',
      'PersonList',
    ]) {
      assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
    }
    assert.equal(doc.components.schemas.Person.$id, undefined, 'no $id left in a component');
    assert.deepEqual(doc.components.schemas.Page.properties.actions.items, { $ref: '#/components/schemas/Action' });
  });

  test('every JSON body and response of an operation is a $ref to a component, every problem to Problem', () => {
    for (const { path, method, op } of operations()) {
      const where = `${method.toUpperCase()} ${path}`;
      const body = op.requestBody?.content?.['application/json']?.schema;
      if (body) assert.match(String(body.$ref), /^#\/components\/schemas\/[A-Z]\w+$/, `${where} body`);
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        for (const [type, media] of Object.entries((response.content ?? {}) as Record<string, Json>)) {
          if (type === 'application/problem+json') assert.equal(media.schema.$ref, '#/components/schemas/Problem', `${where} ${status}`);
          else if (type === 'application/json') assert.match(String(media.schema.$ref), /^#\/components\/schemas\//, `${where} ${status}`);
        }
      }
    }
  });

  test("a body that may be left out (an action's EmptyBody) is not required; a create's body is", () => {
    const archive = operation('/v0/pages/{page_id}/audiences/{audience_id}/archive', 'post').requestBody;
    assert.equal(archive.content['application/json'].schema.$ref, '#/components/schemas/EmptyBody');
    assert.equal(archive.required, false);
    assert.equal(operation('/v0/persons', 'post').requestBody.required, true);
  });

  test('every $ref in the document resolves', () => {
    const walk = (node: Json): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') {
        if (typeof node.$ref === 'string') deref(node);
        Object.values(node).forEach(walk);
      }
    };
    walk(doc);
  });
});

describe('schemas', () => {
  test('Person timestamps are format date-time, not the phone-number pattern', () => {
    for (const [path, method, status] of [
      ['/v0/persons', 'post', '201'],
      ['/v0/persons/{person_id}', 'get', '200'],
      ['/v0/persons/{person_id}', 'patch', '200'],
    ] as const) {
      const person = responseSchema(path, method, status);
      for (const field of ['createdAt', 'updatedAt']) {
        const schema = deref(person.properties?.[field]);
        assert.equal(schema?.format, 'date-time', `${method.toUpperCase()} ${path} ${field}`);
        assert.equal(schema.pattern, undefined, `${field} has no pattern`);
      }
      assert.equal(deref(person.properties.phoneNumber).pattern, '^\\+[1-9]\\d{1,14}$');
    }
  });

  test('Account and log timestamps are format date-time (nullable ones too)', () => {
    const search = responseSchema('/v0/accounts/search', 'get', '200');
    const account = deref(deref(search.properties.items).items);
    for (const field of ['createdAt', 'updatedAt', 'latestActivityAt']) {
      assert.equal(deref(account.properties[field]).format, 'date-time', `Account.${field}`);
    }
    for (const [path, owner] of [
      ['/v0/persons/{person_id}/logs/{person_log_id}', 'PersonLog'],
      ['/v0/accounts/{account_id}/logs/{account_log_id}', 'AccountLog'],
    ] as const) {
      const log = responseSchema(path, 'get', '200');
      for (const field of ['createdAt', 'updatedAt', 'deletedAt']) {
        const schema = deref(log.properties[field]);
        const formats = schema.format
          ? [schema.format]
          : ((schema.anyOf ?? schema.oneOf ?? []) as Json[]).map((s) => deref(s).format).filter(Boolean);
        assert.deepEqual(formats, ['date-time'], `${owner}.${field}: ${JSON.stringify(schema)}`);
      }
    }
  });

  test('the list envelope is {items, hasMore, nextCursor, totalCount}, all required', () => {
    for (const [path, method] of [
      ['/v0/accounts/search', 'get'],
      ['/v0/persons', 'get'],
      ['/v0/persons/search', 'get'],
      ['/v0/assets', 'get'],
    ] as const) {
      const envelope = responseSchema(path, method, '200');
      assert.deepEqual(Object.keys(envelope.properties).sort(), ['hasMore', 'items', 'nextCursor', 'totalCount']);
      assert.deepEqual([...envelope.required].sort(), ['hasMore', 'items', 'nextCursor', 'totalCount']);
    }
  });

  test('create person declares its body and a 201, and the reference bounds', () => {
    const op = operation('/v0/persons', 'post');
    const body = deref(deref(op.requestBody)?.content?.['application/json']?.schema);
    assert.ok(body, 'an application/json request body');
    assert.deepEqual(body.required, ['name']);
    assert.equal(deref(body.properties.name).minLength, 1);
    assert.equal(deref(body.properties.name).maxLength, 255);
    assert.ok(op.responses['201'], 'creation answers 201');
    assert.equal(op.responses['200'], undefined);
  });

  test('PageLink target is a union discriminated by targetType, with its mapping (issues 19, 26)', () => {
    const search = responseSchema('/v0/page_links/search', 'get', '200');
    const target = deref(deref(deref(search.properties.items).items).properties.target);
    assert.deepEqual(target.discriminator, {
      propertyName: 'targetType',
      mapping: {
        audience: '#/components/schemas/AudienceTarget',
        page: '#/components/schemas/PageTarget',
        page_routing: '#/components/schemas/PageRoutingTarget',
      },
    });
    const branches = (target.oneOf as Json[]).map(deref);
    const shapes = Object.fromEntries(
      branches.map((b) => [
        deref(b.properties.targetType).const ?? deref(b.properties.targetType).enum?.[0],
        Object.keys(b.properties).sort(),
      ]),
    );
    assert.deepEqual(shapes, {
      audience: ['audienceId', 'targetType'],
      page: ['pageId', 'targetType'],
      page_routing: ['pageId', 'targetType'],
    });
  });

  test('PATCH bodies take the read-only fields of their resource, marked readOnly (issue 19)', () => {
    for (const [path, field] of [
      ['/v0/persons/{person_id}', 'createdAt'],
      ['/v0/pages/{page_id}', 'audiencesCount'],
      ['/v0/page_links/{page_link_id}', 'tenantDomainId'],
    ] as const) {
      const body = deref(deref(operation(path, 'patch').requestBody).content['application/json'].schema);
      assert.equal(deref(body.properties[field]).readOnly, true, `${path} ${field}`);
      assert.equal(body.additionalProperties, false);
      assert.ok(!(body.required ?? []).includes(field));
    }
  });

  test('error responses are declared as application/problem+json (what the service sends)', () => {
    const op = operation('/v0/persons/{person_id}', 'get');
    const errorKeys = Object.keys(op.responses).filter((k) => /^[45]/.test(k));
    assert.ok(errorKeys.length > 0, 'errors are declared');
    for (const k of errorKeys) {
      const content = deref(op.responses[k]).content ?? {};
      assert.ok('application/problem+json' in content, `${k} content types: ${Object.keys(content).join(', ')}`);
    }
  });
});

describe('GET /docs', () => {
  test('serves an interactive HTML reference page (following a redirect), without a key', async () => {
    let url = '/docs';
    let page = await t.req('GET', url, undefined, { key: null });
    for (let hops = 0; hops < 5 && page.status >= 300 && page.status < 400; hops++) {
      const location = page.headers.location;
      assert.equal(typeof location, 'string', 'a redirect names its target');
      url = new URL(location as string, `http://localhost${url}`).pathname;
      page = await t.req('GET', url, undefined, { key: null });
    }
    assert.equal(page.status, 200, page.text.slice(0, 300));
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(page.text, /<html/i);

    // Every script and stylesheet the page loads is served, resolved from where the page was served.
    const assets = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!).filter((a) => !/^(https?:)?\/\//.test(a));
    assert.ok(
      assets.some((a) => a.endsWith('.js')),
      'the page loads scripts',
    );
    for (const asset of assets) {
      const path = new URL(asset, `http://localhost${url}`).pathname;
      const got = await t.req('GET', path, undefined, { key: null });
      assert.equal(got.status, 200, `${asset} → ${path}`);
    }
  });
});
