import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { ADMIN_TOKEN, expectProblem, onPostgres, startApp, type Res, type TestApp } from '../helpers.js';

const MiB = 1024 * 1024;
const PROBLEM_KEYS = ['code', 'detail', 'requestId', 'status', 'title', 'type'];
const WELL_FORMED_PERSON_ID = 'person_01jd0000000000000000000000';

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

/** The RFC 9457 shape, exactly: the six members (plus `errors` for validation failures) and nothing else. */
function assertProblemShape(res: Res, status: number, code: string): void {
  expectProblem(res, status, code);
  assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
  const keys = Object.keys(res.body)
    .filter((k) => k !== 'errors')
    .sort();
  assert.deepEqual(keys, PROBLEM_KEYS, `problem members: ${res.text}`);
  assert.equal(typeof res.body.type, 'string');
  assert.ok(res.body.type.length > 0);
  assert.equal(typeof res.body.title, 'string');
  assert.ok(res.body.title.length > 0);
  assert.equal(res.body.status, status);
  assert.equal(res.body.code, code);
  assert.ok(res.body.detail.length > 0);
  assert.equal(res.body.requestId, res.headers['x-request-id'], 'requestId matches the x-request-id header');
  if ('errors' in res.body) {
    assert.ok(Array.isArray(res.body.errors));
    for (const e of res.body.errors) {
      assert.deepEqual(Object.keys(e).sort(), ['message', 'path']);
      assert.equal(typeof e.message, 'string');
      assert.match(e.path, /^(\/.*)?$/);
    }
  }
}

function assertRequestId(res: Res): string {
  const id = res.headers['x-request-id'];
  assert.equal(typeof id, 'string', `x-request-id on a ${res.status}`);
  assert.ok((id as string).length > 0);
  return id as string;
}

function allowOf(res: Res): string[] {
  const allow = res.headers.allow;
  assert.equal(typeof allow, 'string', `Allow header on ${res.status}: ${JSON.stringify(res.headers)}`);
  return (allow as string)
    .split(',')
    .map((m) => m.trim().toUpperCase())
    .filter((m) => m !== '');
}

async function createPerson(name = 'Jane Doe'): Promise<string> {
  const res = await t.req('POST', '/v0/persons', { name });
  assert.equal(res.status, 201, res.text);
  return res.body.personId as string;
}

/** A JSON text of exactly `bytes` bytes that is a valid create-person body. */
function personBodyOfSize(bytes: number): string {
  const head = '{"name":"Big","linkedinProfileUrl":"';
  const tail = '"}';
  const body = head + 'x'.repeat(bytes - head.length - tail.length) + tail;
  assert.equal(Buffer.byteLength(body), bytes);
  return body;
}

describe('problem details', () => {
  test('every error kind is application/problem+json with type, title, status, detail, code, requestId', async () => {
    const personId = await createPerson();
    const cases: { res: Res; status: number; code: string }[] = [
      { res: await t.req('GET', '/v0/persons', undefined, { key: null }), status: 401, code: 'unauthorized' },
      { res: await t.req('GET', '/v0/persons', undefined, { key: 'pak_nope' }), status: 401, code: 'unauthorized' },
      { res: await t.req('GET', `/v0/persons/${WELL_FORMED_PERSON_ID}`), status: 404, code: 'not_found' },
      { res: await t.req('GET', '/v0/no-such-thing'), status: 404, code: 'not_found' },
      { res: await t.req('PUT', `/v0/persons/${personId}`, {}), status: 405, code: 'method_not_allowed' },
      { res: await t.req('POST', '/v0/persons', '{"name":'), status: 400, code: 'validation_failed' },
      { res: await t.req('POST', '/v0/persons', { name: '' }), status: 400, code: 'validation_failed' },
      {
        res: await t.req('POST', '/v0/persons', 'name=x', { headers: { 'content-type': 'text/plain' } }),
        status: 415,
        code: 'unsupported_media_type',
      },
      { res: await t.req('POST', '/v0/persons', personBodyOfSize(MiB + 1)), status: 413, code: 'payload_too_large' },
      { res: await t.req('GET', '/v0/accounts/search?bogus=1'), status: 400, code: 'validation_failed' },
      { res: await t.req('GET', '/admin/tenants', undefined, { key: null }), status: 401, code: 'unauthorized' },
    ];
    for (const { res, status, code } of cases) assertProblemShape(res, status, code);
  });

  test('validation failures list their fields under errors, each at its JSON Pointer', async () => {
    const res = await t.req('POST', '/v0/persons', { name: '', phoneNumber: '12', nope: true });
    assertProblemShape(res, 400, 'validation_failed');
    const paths = (res.body.errors as { path: string }[]).map((e) => e.path).sort();
    assert.deepEqual(paths, ['/name', '/nope', '/phoneNumber']);
  });

  test('a missing body field is reported at its own path', async () => {
    const res = await t.req('POST', '/v0/persons', {});
    expectProblem(res, 400, 'validation_failed', ['/name']);
  });
});

describe('x-request-id', () => {
  test('every response carries one: 2xx, 201, 204, 4xx', async () => {
    const personId = await createPerson('Header Person');
    const created = await t.req(
      'POST',
      '/admin/tenants',
      { name: 'Header Tenant' },
      { key: null, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } },
    );
    assert.equal(created.status, 201, created.text);
    const responses = [
      await t.req('GET', '/healthz', undefined, { key: null }),
      await t.req('GET', '/openapi.json', undefined, { key: null }),
      await t.req('GET', '/v0/accounts/search'),
      await t.req('GET', `/v0/persons/${personId}`),
      await t.req('POST', '/v0/persons', { name: 'Another' }),
      created,
      await t.req('DELETE', `/admin/api_keys/${created.body.apiKeyId}`, undefined, {
        key: null,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      }),
      await t.req('GET', '/v0/persons', undefined, { key: null }),
      await t.req('GET', '/nowhere'),
      await t.req('PUT', '/v0/accounts/search'),
      await t.req('POST', '/v0/persons', '{'),
    ];
    assert.deepEqual(
      responses.map((r) => r.status),
      [200, 200, 200, 200, 201, 201, 204, 401, 404, 405, 400],
    );
    const ids = responses.map(assertRequestId);
    assert.equal(new Set(ids).size, ids.length, 'a fresh id per request');
  });

  test('a sane incoming x-request-id is echoed back, in the header and in problem bodies', async () => {
    const given = 'req-2026.11:22_abc-DEF';
    const ok = await t.req('GET', '/v0/accounts/search', undefined, { headers: { 'x-request-id': given } });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers['x-request-id'], given);

    const problem = await t.req('GET', `/v0/persons/${WELL_FORMED_PERSON_ID}`, undefined, { headers: { 'x-request-id': given } });
    expectProblem(problem, 404, 'not_found');
    assert.equal(problem.headers['x-request-id'], given);
    assert.equal(problem.body.requestId, given);

    const uuid = '0b9c3f0e-7d1a-4c55-9a0b-3f2e1d4c5b6a';
    const res = await t.req('GET', '/healthz', undefined, { key: null, headers: { 'x-request-id': uuid } });
    assert.equal(res.headers['x-request-id'], uuid);
  });

  for (const [what, insane] of [
    ['too long (1000 characters)', 'a'.repeat(1000)],
    ['with spaces', 'has some spaces'],
    ['with markup', '<script>alert(1)</script>'],
  ] as const) {
    test(`an insane incoming x-request-id (${what}) is replaced`, async () => {
      const res = await t.req('GET', `/v0/persons/${WELL_FORMED_PERSON_ID}`, undefined, { headers: { 'x-request-id': insane } });
      expectProblem(res, 404, 'not_found');
      const id = assertRequestId(res);
      assert.notEqual(id, insane);
      assert.ok(!id.includes(' ') && id.length <= 128, `replacement is itself sane: ${id}`);
      assert.equal(res.body.requestId, id);
    });
  }
});

describe('routing', () => {
  test('an unknown route is 404 not_found, with a key and without one', async () => {
    for (const [method, url] of [
      ['GET', '/v0/nothing-here'],
      ['POST', '/v0/nothing/here'],
      ['GET', '/nothing-here'],
      ['GET', '/v1/persons'],
      ['GET', '/v0/persons/x/y/z/w'],
    ] as const) {
      const withKey = await t.req(method, url, method === 'POST' ? {} : undefined);
      assertProblemShape(withKey, 404, 'not_found');
      const withoutKey = await t.req(method, url, method === 'POST' ? {} : undefined, { key: null });
      assertProblemShape(withoutKey, 404, 'not_found');
    }
  });

  // DELETE erases a person since issue 14: PUT is the method the path lacks.
  test('PUT /v0/persons/{person_id} is 405 with Allow: GET, PATCH, DELETE', async () => {
    const personId = await createPerson('Allow Person');
    const res = await t.req('PUT', `/v0/persons/${personId}`, {});
    assertProblemShape(res, 405, 'method_not_allowed');
    const allow = allowOf(res);
    assert.ok(allow.includes('GET'), `Allow: ${allow.join(', ')}`);
    assert.ok(allow.includes('PATCH'), `Allow: ${allow.join(', ')}`);
    assert.deepEqual(allow.filter((m) => m !== 'HEAD').sort(), ['DELETE', 'GET', 'PATCH']);
    // The person is untouched.
    assert.equal((await t.req('GET', `/v0/persons/${personId}`)).status, 200);
  });

  // Since issue 14, /v0/accounts/{account_id} takes PATCH and DELETE, and `search` fits its place:
  // those methods reach that route (and answer 400 for the id), so Allow names them too.
  test('PUT /v0/accounts/search is 405 with Allow: GET (search), PATCH and DELETE (the account route)', async () => {
    const res = await t.req('PUT', '/v0/accounts/search', { query: 'x' });
    assertProblemShape(res, 405, 'method_not_allowed');
    assert.deepEqual(
      allowOf(res)
        .filter((m) => m !== 'HEAD')
        .sort(),
      ['DELETE', 'GET', 'PATCH'],
    );
  });

  test('other 405s: PUT /v0/persons (Allow GET, POST), DELETE /v0/accounts (Allow POST)', async () => {
    const persons = await t.req('PUT', '/v0/persons', {});
    assertProblemShape(persons, 405, 'method_not_allowed');
    assert.deepEqual(
      allowOf(persons)
        .filter((m) => m !== 'HEAD')
        .sort(),
      ['GET', 'POST'],
    );

    const accounts = await t.req('DELETE', '/v0/accounts');
    assertProblemShape(accounts, 405, 'method_not_allowed');
    assert.deepEqual(
      allowOf(accounts).filter((m) => m !== 'HEAD'),
      ['POST'],
    );
  });

  test('a 405 is answered without a key too (the path exists whoever asks)', async () => {
    const res = await t.req('DELETE', `/v0/persons/${WELL_FORMED_PERSON_ID}`, undefined, { key: null });
    // Either is defensible; what is not is a 404 for a path that exists.
    assert.ok(res.status === 405 || res.status === 401, `got ${res.status}`);
    assertProblemShape(res, res.status, res.status === 405 ? 'method_not_allowed' : 'unauthorized');
  });
});

describe('request bodies', () => {
  for (const [what, text] of [
    ['truncated JSON', '{"name":'],
    ['not JSON at all', 'hello'],
    ['a trailing comma', '{"name":"x",}'],
    ['single quotes', "{'name':'x'}"],
  ] as const) {
    test(`bad JSON (${what}) is 400 validation_failed`, async () => {
      const res = await t.req('POST', '/v0/persons', text);
      assertProblemShape(res, 400, 'validation_failed');
    });
  }

  test('bad JSON on PATCH is 400 too', async () => {
    const personId = await createPerson('Patch Json');
    const res = await t.req('PATCH', `/v0/persons/${personId}`, '{"name": "x"');
    assertProblemShape(res, 400, 'validation_failed');
  });

  test('a JSON body that is not an object is 400', async () => {
    for (const text of ['[]', '"name"', '42', 'null']) {
      const res = await t.req('POST', '/v0/persons', text);
      assertProblemShape(res, 400, 'validation_failed');
    }
  });

  // Valid JSON refused for a key that could poison prototypes: the answer names the key and where
  // it is, not "not valid JSON" (which sends the client hunting for a syntax error).
  for (const [what, text, path, named] of [
    ['__proto__ at the top', '{"name": "Jane", "__proto__": {"admin": true}}', '/__proto__', '__proto__'],
    ['__proto__ nested', '{"name": "Jane", "payload": {"a~b": [1, {"__proto__": {}}]}}', '/payload/a~0b/1/__proto__', '__proto__'],
    ['__proto__ written with escapes', '{"name": "Jane", "\\u005f_proto__": {}}', '/__proto__', '__proto__'],
    ['__proto__ behind a byte order mark', '\ufeff{"__proto__": {}}', '/__proto__', '__proto__'],
    [
      'constructor.prototype',
      '{"name": "Jane", "constructor": {"prototype": {"admin": true}}}',
      '/constructor/prototype',
      'constructor.prototype',
    ],
    [
      'constructor.prototype nested',
      '{"x": [{"constructor": {"prototype": null}}]}',
      '/x/0/constructor/prototype',
      'constructor.prototype',
    ],
  ] as const) {
    test(`${what} is 400 naming what was refused, and nothing is written`, async () => {
      const before = await t.req('GET', '/v0/persons?limit=1');
      const res = await t.req('POST', '/v0/persons', text);
      assertProblemShape(res, 400, 'validation_failed');
      assert.deepEqual(res.body.errors, [
        { path, message: `is refused: ${named === '__proto__' ? 'the key __proto__' : named} could change the prototype of objects` },
      ]);
      assert.match(res.body.detail, new RegExp(`may not contain (the key )?${named.replace('.', '\\.')} \\(at `));
      assert.doesNotMatch(res.body.detail, /not valid JSON/);
      const after = await t.req('GET', '/v0/persons?limit=1');
      assert.equal(after.body.totalCount, before.body.totalCount);
    });
  }

  test('a key merely named constructor, or prototype, or __proto__ as a value, is accepted as JSON', async () => {
    // The schema refuses unknown fields; the point is that it is the schema answering, at the field.
    const res = await t.req('POST', '/v0/persons', '{"name": "__proto__", "constructor": "x"}');
    expectProblem(res, 400, 'validation_failed', ['/constructor']);
    assert.match(res.body.errors[0].message, /not an allowed field/);
    const ok = await t.req('POST', '/v0/persons', '{"name": "constructor.prototype"}');
    assert.equal(ok.status, 201, ok.text);
  });

  test('broken JSON that also holds __proto__ is still "not valid JSON"', async () => {
    const res = await t.req('POST', '/v0/persons', '{"__proto__": {}');
    assertProblemShape(res, 400, 'validation_failed');
    assert.equal(res.body.detail, 'The body is not valid JSON');
  });

  for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml']) {
    test(`a ${contentType} body is 415 unsupported_media_type`, async () => {
      const res = await t.req('POST', '/v0/persons', 'name=Jane', { headers: { 'content-type': contentType } });
      assertProblemShape(res, 415, 'unsupported_media_type');
    });
  }

  test('a JSON text sent as text/plain is still 415 (the content type decides)', async () => {
    const res = await t.req('POST', '/v0/persons', JSON.stringify({ name: 'Jane' }), { headers: { 'content-type': 'text/plain' } });
    assertProblemShape(res, 415, 'unsupported_media_type');
  });

  test('application/json; charset=utf-8 is accepted', async () => {
    const res = await t.req('POST', '/v0/persons', JSON.stringify({ name: 'Charset' }), {
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    assert.equal(res.status, 201, res.text);
  });

  test('a body of 1 MiB + 1 byte is 413 payload_too_large', async () => {
    const res = await t.req('POST', '/v0/persons', personBodyOfSize(MiB + 1));
    assertProblemShape(res, 413, 'payload_too_large');
  });

  test('a body of 1 MiB - 1 byte, and of exactly 1 MiB, is accepted', async () => {
    for (const size of [MiB - 1, MiB]) {
      const res = await t.req('POST', '/v0/persons', personBodyOfSize(size));
      assert.notEqual(res.status, 413, `${size} bytes`);
      assert.equal(res.status, 201, `${size} bytes: ${res.status} ${res.text.slice(0, 300)}`);
      assert.equal(res.body.linkedinProfileUrl.length, size - '{"name":"Big","linkedinProfileUrl":""}'.length);
    }
  });

  test('an oversize body sent chunked (no Content-Length) over real HTTP is 413 too', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const result = await new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/v0/persons',
          headers: { 'content-type': 'application/json', 'x-api-key': t.key, 'transfer-encoding': 'chunked' },
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            body += c;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        },
      );
      req.on('error', reject);
      const text = personBodyOfSize(MiB + 64 * 1024);
      // Several chunks, so the limit is found while reading, not from a header.
      for (let i = 0; i < text.length; i += 64 * 1024) req.write(text.slice(i, i + 64 * 1024));
      req.end();
    });
    assert.equal(result.status, 413, result.body);
    assert.match(String(result.headers['content-type']), /^application\/problem\+json/);
    assert.equal(JSON.parse(result.body).code, 'payload_too_large');
    assert.ok(result.headers['x-request-id']);
  });
});

describe('query strings', () => {
  test('an unknown query parameter on a list is 400 naming it at /<name>', async () => {
    const search = await t.req('GET', '/v0/accounts/search?bogus=1');
    expectProblem(search, 400, 'validation_failed', ['/bogus']);
    const list = await t.req('GET', '/v0/persons?sort=name&limit=5');
    expectProblem(list, 400, 'validation_failed', ['/sort']);
    assert.ok(!list.body.errors.some((e: { path: string }) => e.path === '/limit'), 'a known parameter is not blamed');
  });

  test('an unknown query parameter on a get-one is 400 too', async () => {
    const personId = await createPerson('Query Person');
    const res = await t.req('GET', `/v0/persons/${personId}?expand=logs`);
    expectProblem(res, 400, 'validation_failed', ['/expand']);
  });

  test('an unknown query parameter on a create is 400 too', async () => {
    const res = await t.req('POST', '/v0/persons?dryRun=true', { name: 'Dry Run' });
    expectProblem(res, 400, 'validation_failed', ['/dryRun']);
  });

  test('bad values of known query parameters are 400 at their path', async () => {
    for (const [qs, path] of [
      ['limit=0', '/limit'],
      ['limit=101', '/limit'],
      ['limit=abc', '/limit'],
      ['limit=1.5', '/limit'],
      ['includeEmptyOnly=yes', '/includeEmptyOnly'],
      ['cursor=not-a-cursor', '/cursor'],
    ] as const) {
      const res = await t.req('GET', `/v0/accounts/search?${qs}`);
      expectProblem(res, 400, 'validation_failed', [path]);
    }
    assert.equal((await t.req('GET', '/v0/accounts/search?limit=1')).status, 200);
    assert.equal((await t.req('GET', '/v0/accounts/search?limit=100')).status, 200);
  });

  test('a NUL character in a path or query value is 400 naming it, before any other rule', async () => {
    for (const [url, path] of [
      [`/v0/persons/${WELL_FORMED_PERSON_ID}%00`, '/person_id'],
      ['/v0/accounts/search?query=ab%00c', '/query'],
      ['/v0/accounts/search?query=abc&query=d%00', '/query'],
      ['/v0/persons?cursor=%00', '/cursor'],
    ] as const) {
      const res = await t.req('GET', url);
      expectProblem(res, 400, 'validation_failed', [path]);
      assert.match(res.body.detail, /NUL/, url);
    }
    assert.equal((await t.req('GET', '/v0/accounts/search?query=abc')).status, 200);
  });
});

describe('security headers', () => {
  test('every answer is nosniff and no-store, errors included', async () => {
    const personId = await createPerson('Headers Person');
    for (const res of [
      await t.req('GET', `/v0/persons/${personId}`),
      await t.req('POST', '/v0/persons', { name: 'Headers Two' }),
      await t.req('GET', '/v0/persons', undefined, { key: null }),
      await t.req('GET', '/nowhere'),
      await t.req('PUT', '/v0/accounts/search'),
      await t.req('POST', '/v0/persons', '{'),
      await t.req('GET', '/v0/accounts/search?limit=0'),
    ]) {
      assert.equal(res.headers['x-content-type-options'], 'nosniff', `nosniff on a ${res.status}`);
      assert.equal(res.headers['cache-control'], 'no-store', `no-store on a ${res.status}`);
    }
  });
});

describe('500', () => {
  test('an internal error is 500 internal with no stack, SQL or driver message in the body', async () => {
    const broken = await startApp();
    try {
      const created = await broken.req('POST', '/v0/persons', { name: 'Doomed' });
      assert.equal(created.status, 201);
      // Break the database under the running app: every persons query now fails inside the driver.
      await sql`alter table persons rename to persons_gone`.execute(broken.app.db);
      const res = await broken.req('GET', `/v0/persons/${created.body.personId}`, undefined, { headers: { 'x-request-id': 'boom-1' } });
      if (res.status !== 500) {
        // Once seen in CI on PostgreSQL (a 404): say what the app's connection then resolved `persons` to.
        const where = onPostgres
          ? (
              await sql<{
                found: string | null;
                path: string;
              }>`select to_regclass('persons')::text as found, current_setting('search_path') as path`.execute(broken.app.db)
            ).rows[0]
          : undefined;
        assert.fail(`expected a 500, got ${res.status} ${res.text}; persons resolves to ${JSON.stringify(where)}`);
      }
      assertProblemShape(res, 500, 'internal');
      assert.equal(res.body.requestId, 'boom-1');
      assert.equal(res.body.errors, undefined);
      for (const leak of [
        'persons',
        'no such table',
        'SQLITE',
        'sqlite',
        'select',
        'SELECT',
        '    at ',
        '.ts:',
        '.js:',
        'node_modules',
        'Error:',
      ]) {
        assert.ok(!res.text.includes(leak), `500 body leaks ${JSON.stringify(leak)}: ${res.text}`);
      }
      assert.equal(res.body.stack, undefined);
    } finally {
      await broken.close();
    }
  });
});
