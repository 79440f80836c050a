import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from 'node:test';
import { freshDatabase, onPostgres, type TestDatabase } from './helpers.js';
import { START_MS, startsAndWork } from './server-process.js';

// Real server and CLI processes, as an operator runs them: `node --import tsx src/server.ts`.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// A cold start of src/server.ts or src/cli.ts through tsx takes up to about 30 s on a CI machine
// running four suites at once (28 s measured): the waits below are for the machine, not the product.
// Each test starts up to three server or CLI processes.
const TIMEOUT = startsAndWork(3, 30_000);
const BOOTSTRAP_KEY = 'bootstrap-key-0123456789-abcdefXYZ';

const children = new Set<ChildProcess>();
const databases: TestDatabase[] = [];

after(async () => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  for (const db of databases) await db.drop().catch(() => {});
});

async function newDatabase(): Promise<string> {
  const db = await freshDatabase();
  databases.push(db);
  return db.url;
}

/** A port nobody listens on right now: listen on 0, read the port, close. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The process environment minus everything the service reads, plus `env`. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const name of [
    'PORT',
    'HOST',
    'DATABASE_URL',
    'DATABASE_POOL_SIZE',
    'LOG_LEVEL',
    'ADMIN_TOKEN',
    'BOOTSTRAP_API_KEY',
    'NODE_TEST_CONTEXT',
    'NODE_OPTIONS',
  ]) {
    delete base[name];
  }
  return { ...base, ...env };
}

interface Proc {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (null when killed by a signal), or rejects after `ms`. */
  exited(ms?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function run(script: 'src/server.ts' | 'src/cli.ts', args: string[], env: Record<string, string>): Proc {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => {
    out += c;
  });
  child.stderr!.setEncoding('utf8').on('data', (c: string) => {
    err += c;
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal }));
  });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited: (ms = START_MS) =>
      Promise.race([
        exit,
        new Promise<never>((_, reject) => {
          const timer = setTimeout(() => reject(new Error(`process did not exit within ${ms} ms\nstdout: ${out}\nstderr: ${err}`)), ms);
          timer.unref();
        }),
      ]),
  };
}

interface Server extends Proc {
  port: number;
  url: string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts the server and waits until it says it listens on its port and /healthz answers 200. Another
 * test may take the probed port before the child binds it: the child then exits, and we try again.
 */
async function startServer(env: Record<string, string>, attempt = 1): Promise<Server> {
  const port = await freePort();
  const proc = run('src/server.ts', [], { PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + START_MS;
  for (;;) {
    if (proc.child.exitCode !== null || proc.child.signalCode !== null) {
      await proc.exited();
      if (proc.stderr().includes('EADDRINUSE') && attempt < 5) return startServer(env, attempt + 1);
      throw new Error(`server exited early (${proc.child.exitCode})\nstdout: ${proc.stdout()}\nstderr: ${proc.stderr()}`);
    }
    try {
      const res = proc.stdout().includes(`Listening on ${url};`) ? await fetch(`${url}/healthz`) : undefined;
      if (res?.status === 200) break;
    } catch {
      // held until the first tenant exists
    }
    if (Date.now() > deadline) throw new Error(`server not healthy in time\nstdout: ${proc.stdout()}\nstderr: ${proc.stderr()}`);
    await sleep(100);
  }
  return {
    ...proc,
    port,
    url,
    stop: async (signal = 'SIGTERM') => {
      proc.child.kill(signal);
      return (await proc.exited(10_000)).code;
    },
  };
}

async function cli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string; json: unknown }> {
  const proc = run('src/cli.ts', args, { LOG_LEVEL: 'warn', ...env });
  const { code } = await proc.exited(START_MS);
  let json: unknown;
  try {
    json = JSON.parse(proc.stdout());
  } catch {
    json = undefined;
  }
  return { code, stdout: proc.stdout(), stderr: proc.stderr(), json };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function get(server: Server, url: string, key?: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${server.url}${url}`, { headers: key === undefined ? {} : { 'x-api-key': key } });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, body };
}

const nonEmptyLines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');

describe('invalid configuration stops start-up with one line naming the variable', () => {
  for (const [name, value] of [
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['LOG_LEVEL', 'loud'],
    ['BOOTSTRAP_API_KEY', 'short'],
    ['BOOTSTRAP_API_KEY', 'has spaces in it but is long enough'],
    ['DATABASE_URL', 'mysql://x'],
  ] as const) {
    test(`${name}=${value}`, TIMEOUT, async () => {
      const env: Record<string, string> = { PORT: String(await freePort()), DATABASE_URL: await newDatabase(), [name]: value };
      const proc = run('src/server.ts', [], env);
      let said = Number.POSITIVE_INFINITY;
      proc.child.stderr?.once('data', () => (said = Date.now()));
      const { code } = await proc.exited(START_MS);
      const elapsed = Date.now() - said;
      assert.notEqual(code, 0, `exit code ${code}`);
      assert.notEqual(code, null, 'exited by itself, not by a signal');
      assert.ok(elapsed < 5_000, `exits at once once it has said why (${elapsed} ms)`);
      const lines = nonEmptyLines(proc.stderr());
      assert.equal(lines.length, 1, `one line on stderr, got:\n${proc.stderr()}`);
      assert.ok(lines[0]!.includes(name), `the line names ${name}: ${lines[0]}`);
      assert.ok(!/\n\s+at /.test(proc.stderr()), 'no stack trace');
      assert.equal(proc.stdout(), '', 'nothing on stdout');
    });
  }
});

describe('bootstrap', () => {
  test('first start on an empty database prints a fresh key that works; the second start prints none', TIMEOUT, async () => {
    const DATABASE_URL = await newDatabase();
    const first = await startServer({ DATABASE_URL, LOG_LEVEL: 'info' });
    try {
      const keys = [...first.stdout().matchAll(/pak_[A-Za-z0-9]+/g)].map((m) => m[0]);
      assert.ok(keys.length > 0, `a key on stdout:\n${first.stdout()}`);
      assert.equal(new Set(keys).size, 1, 'one key, however many times the lines mention it');
      const key = keys[0]!;
      assert.ok(key.length >= 4 + 43, `>= 32 bytes of entropy: ${key.length} characters`);
      assert.ok(
        nonEmptyLines(first.stdout()).some((l) => l.includes(key) && l.includes('x-api-key')),
        'a line says how to use it (x-api-key)',
      );
      assert.ok(!first.stderr().includes(key), 'the key is not on stderr');

      const search = await get(first, '/v0/accounts/search', key);
      assert.equal(search.status, 200, JSON.stringify(search.body));
      assert.deepEqual(search.body, { items: [], hasMore: false, nextCursor: null, totalCount: 0 });
      assert.equal((await get(first, '/v0/accounts/search', `${key}x`)).status, 401);
      const afterRequest = first.stdout();
      assert.equal([...afterRequest.matchAll(new RegExp(key, 'g'))].length, keys.length, 'serving a request with the key does not log it');
    } finally {
      assert.equal(await first.stop(), 0);
    }

    const second = await startServer({ DATABASE_URL, LOG_LEVEL: 'info' });
    try {
      assert.doesNotMatch(second.stdout(), /pak_/, `no key on the second start:\n${second.stdout()}`);
      assert.doesNotMatch(second.stderr(), /pak_/);
    } finally {
      assert.equal(await second.stop(), 0);
    }

    const tenants = await cli(['tenants', 'list'], { DATABASE_URL });
    assert.equal(tenants.code, 0, tenants.stderr);
    const list = tenants.json as { items: { name: string }[]; totalCount: number };
    assert.deepEqual(
      list.items.map((x) => x.name),
      ['default'],
    );
    assert.equal(list.totalCount, 1);
  });

  test('start: a taken port prints no key that is then lost', TIMEOUT, async () => {
    // Another server process holds the port.
    const holder = await startServer({ DATABASE_URL: await newDatabase(), BOOTSTRAP_API_KEY: BOOTSTRAP_KEY });
    const DATABASE_URL = await newDatabase();
    try {
      const failed = run('src/server.ts', [], { PORT: String(holder.port), HOST: '127.0.0.1', DATABASE_URL, LOG_LEVEL: 'info' });
      let said = Number.POSITIVE_INFINITY;
      failed.child.stderr?.once('data', () => (said = Date.now()));
      const { code } = await failed.exited(START_MS);
      assert.notEqual(code, 0, `exit code ${code}`);
      assert.notEqual(code, null, 'exited by itself, not by a signal');
      assert.ok(Date.now() - said < 5_000, 'exits at once once it has said why');
      assert.doesNotMatch(failed.stdout(), /pak_/, `no key printed:\n${failed.stdout()}`);
      assert.doesNotMatch(failed.stderr(), /pak_/);
      const lines = nonEmptyLines(failed.stderr());
      assert.equal(lines.length, 1, `one line on stderr, got:\n${failed.stderr()}`);
      assert.ok(lines[0]!.includes(`127.0.0.1:${holder.port}`), `names where: ${lines[0]}`);
      assert.match(lines[0]!, /port is taken/, 'says what happened');
      assert.match(lines[0]!, /next start that listens prints the API key/, 'says how to get a key');
      assert.ok(!/\n\s+at /.test(failed.stderr()), 'no stack trace');

      const tenants = await cli(['tenants', 'list'], { DATABASE_URL });
      assert.equal(tenants.code, 0, tenants.stderr);
      assert.deepEqual((tenants.json as { items: unknown[] }).items, [], 'the failed start created no tenant');
      assert.equal((await get(holder, '/healthz')).status, 200, 'the process holding the port is untouched');
    } finally {
      assert.equal(await holder.stop(), 0);
    }

    // The next start that listens makes the first tenant, and prints its key, which works.
    const next = await startServer({ DATABASE_URL, LOG_LEVEL: 'info' });
    try {
      const key = /API key: (pak_[A-Za-z0-9]+)/.exec(next.stdout())?.[1];
      assert.ok(key, `a key on stdout:\n${next.stdout()}`);
      assert.equal((await get(next, '/v0/accounts/search', key)).status, 200);
    } finally {
      assert.equal(await next.stop(), 0);
    }
  });

  test('BOOTSTRAP_API_KEY: the key works, is never printed or logged, and a restart keeps one tenant "default"', TIMEOUT, async () => {
    const DATABASE_URL = await newDatabase();
    const env = { DATABASE_URL: onPostgres ? DATABASE_URL : `sqlite:${DATABASE_URL}`, BOOTSTRAP_API_KEY: BOOTSTRAP_KEY };

    const first = await startServer({ ...env, LOG_LEVEL: 'trace' });
    try {
      const health = await get(first, '/healthz');
      assert.equal(health.status, 200);
      assert.deepEqual(health.body, { status: 'ok' });
      assert.equal((await get(first, '/v0/accounts/search', BOOTSTRAP_KEY)).status, 200);
      assert.equal((await get(first, '/v0/accounts/search?query=x', BOOTSTRAP_KEY)).status, 200);
      assert.equal((await get(first, '/v0/accounts/search', BOOTSTRAP_KEY.slice(0, -1))).status, 401);
      assert.doesNotMatch(first.stdout(), /pak_/, 'no generated key is printed when BOOTSTRAP_API_KEY is set');
    } finally {
      assert.equal(await first.stop(), 0);
    }
    assert.ok(!first.stdout().includes(BOOTSTRAP_KEY), 'the key is never logged, even at trace level');
    assert.ok(!first.stderr().includes(BOOTSTRAP_KEY));

    const second = await startServer(env);
    try {
      assert.equal((await get(second, '/v0/accounts/search', BOOTSTRAP_KEY)).status, 200);
      assert.deepEqual((await get(second, '/healthz')).body, { status: 'ok' });
      assert.doesNotMatch(second.stdout(), /pak_/);
    } finally {
      assert.equal(await second.stop(), 0);
    }

    const tenants = await cli(['tenants', 'list'], env);
    assert.equal(tenants.code, 0, tenants.stderr);
    const list = tenants.json as {
      items: { name: string; tenantId: string }[];
      totalCount: number;
      hasMore: boolean;
      nextCursor: string | null;
    };
    assert.deepEqual(
      list.items.map((x) => x.name),
      ['default'],
    );
    assert.equal(list.totalCount, 1);
    assert.equal(list.hasMore, false);
    assert.equal(list.nextCursor, null);
  });

  test('BOOTSTRAP_API_KEY on a database that already has tenants joins the existing "default" tenant', TIMEOUT, async () => {
    const DATABASE_URL = await newDatabase();
    // First start without it: a generated key for "default".
    const first = await startServer({ DATABASE_URL });
    const generated = /pak_[A-Za-z0-9]+/.exec(first.stdout())?.[0];
    assert.ok(generated, first.stdout());
    const created = await get(first, '/v0/accounts/search', generated);
    assert.equal(created.status, 200);
    assert.equal(await first.stop(), 0);

    const second = await startServer({ DATABASE_URL, BOOTSTRAP_API_KEY: BOOTSTRAP_KEY });
    try {
      assert.equal((await get(second, '/v0/accounts/search', BOOTSTRAP_KEY)).status, 200);
      assert.equal((await get(second, '/v0/accounts/search', generated)).status, 200, 'the generated key still works');
      // Both keys act as the same tenant: what one creates, the other sees.
      const res = await fetch(`${second.url}/v0/persons`, {
        method: 'POST',
        headers: { 'x-api-key': generated, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Shared Person' }),
      });
      assert.equal(res.status, 201);
      const person = (await res.json()) as { personId: string };
      assert.equal((await get(second, `/v0/persons/${person.personId}`, BOOTSTRAP_KEY)).status, 200);
    } finally {
      assert.equal(await second.stop(), 0);
    }
    const tenants = await cli(['tenants', 'list'], { DATABASE_URL });
    assert.deepEqual(
      (tenants.json as { items: { name: string }[] }).items.map((x) => x.name),
      ['default'],
    );
  });
});

describe('shutdown', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    test(`${signal} → exit 0 within a few seconds, and the database reopens`, TIMEOUT, async () => {
      const DATABASE_URL = await newDatabase();
      const server = await startServer({ DATABASE_URL, BOOTSTRAP_API_KEY: BOOTSTRAP_KEY });
      assert.equal((await get(server, '/v0/accounts/search', BOOTSTRAP_KEY)).status, 200);
      const started = Date.now();
      const code = await server.stop(signal);
      assert.equal(code, 0, `exit code; stderr: ${server.stderr()}`);
      assert.ok(Date.now() - started < 5_000, `exited in ${Date.now() - started} ms`);
      if (!onPostgres) {
        // A SQLite database in WAL mode that was closed cleanly leaves no -wal file behind.
        assert.ok(!fs.existsSync(`${DATABASE_URL}-wal`), 'the database was closed cleanly (no -wal file left)');
      }
      const reopened = await cli(['tenants', 'list'], { DATABASE_URL });
      assert.equal(reopened.code, 0, reopened.stderr);
      assert.equal((reopened.json as { totalCount: number }).totalCount, 1);
    });
  }

  test('SIGTERM while a request is in flight: the request completes, then the process exits 0', TIMEOUT, async () => {
    const DATABASE_URL = await newDatabase();
    const server = await startServer({ DATABASE_URL, BOOTSTRAP_API_KEY: BOOTSTRAP_KEY });
    const body = JSON.stringify({ name: 'In Flight' });
    const socket = net.connect(server.port, '127.0.0.1');
    let response = '';
    socket.setEncoding('utf8').on('data', (c: string) => {
      response += c;
    });
    const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    // Headers and half of the body now; the rest after the signal.
    socket.write(
      `POST /v0/persons HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: ${BOOTSTRAP_KEY}\r\ncontent-type: application/json\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body.slice(0, 8)}`,
    );
    await sleep(300);
    server.child.kill('SIGTERM');
    await sleep(500);
    assert.equal(server.child.exitCode, null, 'still draining while the request is in flight');
    // write, not end: a client that half-closes its side is aborted by Node's HTTP server whatever the shutdown does.
    socket.write(body.slice(8));
    await Promise.race([ended, sleep(10_000)]);
    assert.match(
      response,
      /^HTTP\/1\.1 201 /,
      `the in-flight request completed: ${JSON.stringify(response.slice(0, 300))}; exit ${server.child.exitCode}; stderr: ${server.stderr()}`,
    );
    assert.ok(response.includes('"name":"In Flight"'));
    const { code } = await server.exited(10_000);
    assert.equal(code, 0);

    // The write was committed: a new server on the same database has the person.
    const again = await startServer({ DATABASE_URL, BOOTSTRAP_API_KEY: BOOTSTRAP_KEY });
    try {
      const list = await get(again, '/v0/persons', BOOTSTRAP_KEY);
      assert.equal(list.status, 200);
      assert.deepEqual(
        (list.body as { items: { name: string }[] }).items.map((p) => p.name),
        ['In Flight'],
      );
    } finally {
      assert.equal(await again.stop(), 0);
    }
  });
});

describe('admin CLI', () => {
  test('tenants create, keys create, keys revoke (401 at once on a running server), tenants list', TIMEOUT, async () => {
    const DATABASE_URL = await newDatabase();
    const server = await startServer({ DATABASE_URL, BOOTSTRAP_API_KEY: BOOTSTRAP_KEY });
    try {
      const created = await cli(['tenants', 'create', 'Foo', 'Bar'], { DATABASE_URL });
      assert.equal(created.code, 0, created.stderr);
      const tenant = created.json as {
        tenant: { tenantId: string; name: string; slug: string; createdAt: string };
        apiKey: string;
        apiKeyId: string;
      };
      assert.ok(tenant, `JSON on stdout: ${created.stdout}`);
      assert.deepEqual(Object.keys(tenant).sort(), ['apiKey', 'apiKeyId', 'tenant']);
      assert.equal(tenant.tenant.name, 'Foo Bar');
      assert.equal(tenant.tenant.slug, 'foo-bar');
      assert.match(tenant.tenant.tenantId, /^tenant_[0-9a-z]{26}$/);
      assert.match(tenant.tenant.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      assert.match(tenant.apiKey, /^pak_[A-Za-z0-9]{43,}$/);
      assert.match(tenant.apiKeyId, /^key_[0-9a-z]{26}$/);
      assert.equal(
        (await get(server, '/v0/accounts/search', tenant.apiKey)).status,
        200,
        'a key made by the CLI works on the running server',
      );

      const key = await cli(['keys', 'create', tenant.tenant.tenantId], { DATABASE_URL });
      assert.equal(key.code, 0, key.stderr);
      const second = key.json as { apiKey: string; apiKeyId: string };
      // The same fields as POST /admin/tenants/{tenantId}/api_keys answers.
      assert.deepEqual(Object.keys(second).sort(), ['apiKey', 'apiKeyId', 'expiresAt', 'rateLimitBurst', 'rateLimitPerSecond', 'scopes']);
      assert.match(second.apiKey, /^pak_[A-Za-z0-9]{43,}$/);
      assert.notEqual(second.apiKey, tenant.apiKey);
      assert.equal((await get(server, '/v0/accounts/search', second.apiKey)).status, 200);

      const revoked = await cli(['keys', 'revoke', tenant.apiKeyId], { DATABASE_URL });
      assert.equal(revoked.code, 0, revoked.stderr);
      const denied = await get(server, '/v0/accounts/search', tenant.apiKey);
      assert.equal(denied.status, 401, 'a key revoked by the CLI is refused by the running server at once');
      assert.equal((denied.body as { code: string }).code, 'unauthorized');
      assert.equal((await get(server, '/v0/accounts/search', second.apiKey)).status, 200, 'the other key still works');

      const listed = await cli(['tenants', 'list'], { DATABASE_URL });
      assert.equal(listed.code, 0, listed.stderr);
      const list = listed.json as {
        items: { tenantId: string; name: string }[];
        hasMore: boolean;
        nextCursor: string | null;
        totalCount: number;
      };
      assert.deepEqual(Object.keys(list).sort(), ['hasMore', 'items', 'nextCursor', 'totalCount']);
      assert.deepEqual(
        list.items.map((x) => x.name),
        ['Foo Bar', 'default'],
        'newest first',
      );
      assert.equal(list.items[0]!.tenantId, tenant.tenant.tenantId);
      assert.equal(list.totalCount, 2);
      assert.equal(list.hasMore, false);
      assert.equal(list.nextCursor, null);
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });

  test('usage errors exit 2; unknown ids exit non-zero; nothing is printed on stdout for them', TIMEOUT, async () => {
    const DATABASE_URL = await newDatabase();
    for (const args of [['frobnicate'], [], ['tenants'], ['tenants', 'delete', 'x'], ['tenants', 'create'], ['keys', 'create']]) {
      const res = await cli(args, { DATABASE_URL });
      assert.equal(res.code, 2, `${args.join(' ') || '(none)'}: exit ${res.code}\n${res.stderr}`);
      assert.equal(res.stdout, '');
      assert.ok(res.stderr.length > 0);
    }
    for (const args of [
      ['keys', 'create', 'tenant_01jd0000000000000000000000'],
      ['keys', 'revoke', 'key_01jd0000000000000000000000'],
    ]) {
      const res = await cli(args, { DATABASE_URL });
      assert.ok(res.code !== 0 && res.code !== null, `${args.join(' ')}: exit ${res.code}`);
      assert.equal(res.stdout, '');
      assert.ok(res.stderr.length > 0);
    }
  });

  test('the CLI refuses an invalid configuration with one line naming the variable', TIMEOUT, async () => {
    const res = await cli(['tenants', 'list'], { DATABASE_URL: 'mysql://x' });
    assert.ok(res.code !== 0 && res.code !== null);
    const lines = nonEmptyLines(res.stderr);
    assert.equal(lines.length, 1, res.stderr);
    assert.ok(lines[0]!.includes('DATABASE_URL'));
  });
});
