import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { type Kysely, Migrator } from 'kysely';
import { createApiKey, createTenant } from '../src/admin/repository.js';
import { buildApp, type AppOptions } from '../src/app.js';
import { forBulkWork, loadConfig } from '../src/config.js';
import { type Db, openDatabase } from '../src/db/connection.js';
import { migrateDatabase } from '../src/db/migrate.js';
import { migrations } from '../src/db/migrations/index.js';
import type { Database } from '../src/db/types.js';
import { newId } from '../src/ids.js';
import { type Claims, encodeClaims, signedTokens } from '../src/signed-tokens.js';
import pg from 'pg';

/** A parsed JSON response body: tests read fields off it freely. */
// biome-ignore lint/suspicious/noExplicitAny: test bodies are read field by field, and an assertion fails on any surprise
export type Json = any;

export interface Res {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: Json;
  text: string;
}

export interface TestApp {
  app: FastifyInstance;
  /** The API key of the first tenant. */
  key: string;
  tenantId: string;
  adminToken: string;
  /** Another tenant with its own key, for isolation tests. */
  newTenant(name?: string): Promise<{ key: string; tenantId: string; apiKeyId: string }>;
  /** A request as the first tenant (or with `key`), JSON in and out. */
  req(method: string, url: string, body?: unknown, opts?: { key?: string | null; headers?: Record<string, string> }): Promise<Res>;
  /**
   * `work` with a migrator of the app's database, over a connection of its own without the
   * service's 2.5 s limit on a query, as the service migrates: the migration lock is one for every
   * test file on the PostgreSQL server, and a loaded machine's files wait for it longer than that.
   */
  migrating<T>(work: (migrator: Migrator) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
/** The key tenants' secrets are sealed with in the PostgreSQL suites. */
export const TEST_INTEGRATIONS_SECRET = 'test-integrations-secret-0123456789abcdef';

/** The backend under test: SQLite unless TEST_DATABASE_URL names a PostgreSQL server. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? '';
export const onPostgres = /^postgres(ql)?:/.test(TEST_DATABASE_URL);

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * A fresh, empty database of the backend under test: a temporary SQLite file, or a PostgreSQL
 * schema of its own (so test files run in parallel on one server).
 */
export async function freshDatabase(): Promise<TestDatabase> {
  if (!onPostgres) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pam-test-'));
    return { url: path.join(dir, 'test.sqlite'), drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
  }
  const schema = `test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = new URL(TEST_DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${schema},public`);
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      await client.query(`drop schema ${schema} cascade`);
      await client.end();
    },
  };
}

/** A fresh database with two independent handles on it: `db`, and `other`, what another process would see. */
export interface TwoHandles {
  db: Db;
  other: Db;
  /** Closes both handles and drops the database. */
  close(): Promise<void>;
}

/**
 * A fresh database, migrated as the service migrates it: on connections without the 2.5 s query
 * limit (the files of a run wait in turn for the migrations' lock). Then two handles on it.
 */
export async function twoHandles(): Promise<TwoHandles> {
  const database = await freshDatabase();
  const config = loadConfig({ DATABASE_URL: database.url }).database;
  await migrateDatabase(config);
  const db = openDatabase(config);
  const other = openDatabase(config);
  return {
    db,
    other,
    close: async () => {
      await db.close();
      await other.close();
      await database.drop();
    },
  };
}

/** An injected response as tests read it: the body parsed when it is JSON, and its text. */
export function toRes(res: { statusCode: number; headers: Res['headers']; body: string }): Res {
  let body: Json;
  try {
    body = res.body ? JSON.parse(res.body) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.statusCode, headers: res.headers, body, text: res.body };
}

/**
 * The real app over a fresh database of its own (one per test file, so files run in parallel), or
 * over `env.DATABASE_URL` (from `freshDatabase()`, which the caller drops), for one database seen
 * by two configurations in turn. Not at once on SQLite: its writers in one process would wait for
 * each other's locks while blocking the event loop that would release them.
 */
export async function startApp(env: Record<string, string> = {}, options: Omit<AppOptions, 'config'> = {}): Promise<TestApp> {
  const shared = env.DATABASE_URL;
  const database: TestDatabase = shared === undefined ? await freshDatabase() : { url: shared, drop: async () => {} };
  // Test files run in parallel against one PostgreSQL server: small pools keep them under its connection limit.
  // Suites fire hundreds of requests with one key: the rate limit is tested on its own, with its own settings.
  const config = loadConfig({
    DATABASE_URL: database.url,
    LOG_LEVEL: 'silent',
    ADMIN_TOKEN,
    DATABASE_POOL_SIZE: '4',
    RATE_LIMIT_PER_SECOND: '1000000',
    // The page agent would move the versions suites queue by hand: its own tests turn it on.
    AGENT: 'false',
    // PostgreSQL stores a tenant's secrets only under a configured key (issue 45): its suites have
    // one, and the refusal without it is tested on its own (test/integrations/secret-key.test.ts).
    ...(onPostgres ? { INTEGRATIONS_SECRET: TEST_INTEGRATIONS_SECRET } : {}),
    ...env,
  });
  const app = await buildApp({ ...options, config });

  const newTenant = async (name = 'Test tenant') =>
    app.db.transaction().execute(async (trx) => {
      const tenant = await createTenant(trx, name, config.fallbackDomainSuffix);
      const { apiKey, apiKeyId } = await createApiKey(trx, tenant.tenantId);
      return { key: apiKey, tenantId: tenant.tenantId, apiKeyId };
    });
  const first = await newTenant('Acme');

  const req: TestApp['req'] = async (method, url, body, opts = {}) => {
    const key = opts.key === undefined ? first.key : opts.key;
    const headers: Record<string, string> = { ...(key !== null ? { 'x-api-key': key } : {}), ...opts.headers };
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    if (payload !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
      headers['content-type'] = 'application/json';
    }
    return toRes(await app.inject({ method: method as 'GET', url, headers, ...(payload !== undefined ? { payload } : {}) }));
  };

  return {
    app,
    key: first.key,
    tenantId: first.tenantId,
    adminToken: ADMIN_TOKEN,
    newTenant,
    req,
    migrating: async (work) => {
      // SQLite has no limit to lift, and a second connection of this process would only wait on the first.
      const bulk = onPostgres ? openDatabase(forBulkWork(config.database)) : undefined;
      try {
        const db = bulk?.kysely ?? (app.db as Kysely<Database>);
        const schema = onPostgres
          ? ((await db.selectNoFrom((eb) => eb.fn<string>('current_schema').as('s')).executeTakeFirst())?.s as string)
          : undefined;
        const migrator = new Migrator({
          db,
          provider: { getMigrations: async () => migrations },
          ...(schema ? { migrationTableSchema: schema } : {}),
        });
        return await work(migrator);
      } finally {
        await bulk?.close();
      }
    },
    close: async () => {
      await app.close();
      await database.drop();
    },
  };
}

/**
 * A custom domain of the tenant (`key`, else the first), verified as an operator attests it: a new
 * domain is pending, and only verified domains are served.
 */
export async function verifiedDomain(t: TestApp, hostname: string, key?: string): Promise<Json> {
  const created = ok(await t.req('POST', '/v0/tenant_domains', { hostname }, key === undefined ? {} : { key }), 201);
  return ok(await attest(t, created.tenantDomainId));
}

/**
 * A verified custom domain row written past the creation rules, as a database from before issue
 * 25 could hold it (an IP, localhost, a name under the fallback suffix). Returns its id.
 */
export async function domainRowPastTheRules(app: FastifyInstance, tenantId: string, hostname: string): Promise<string> {
  const id = newId('domain');
  const at = new Date().toISOString();
  await app.db
    .insertInto('tenant_domains')
    .values({
      id,
      tenant_id: tenantId,
      hostname,
      is_fallback: 0,
      created_at: at,
      status: 'verified',
      verified_at: at,
      verification_value: null,
      next_check_at: null,
    })
    .execute();
  return id;
}

/** `POST /admin/tenant_domains/{id}/verify` with the admin token. */
export function attest(t: TestApp, tenantDomainId: string): Promise<Res> {
  return t.req('POST', `/admin/tenant_domains/${tenantDomainId}/verify`, undefined, {
    key: null,
    headers: { authorization: `Bearer ${t.adminToken}` },
  });
}

/** The body of a response that must have `status` (the response's text in the failure message). */
export function ok(res: Res, status = 200): Json {
  assert.equal(res.status, status, res.text);
  return res.body;
}

/** Asserts a problem+json answer with `status`, `code`, and (when given) an error at each path. */
export function expectProblem(res: Res, status: number, code: string, paths: string[] = []): void {
  const ok =
    res.status === status &&
    String(res.headers['content-type']).startsWith('application/problem+json') &&
    res.body?.code === code &&
    res.body?.status === status &&
    typeof res.body?.requestId === 'string' &&
    typeof res.body?.detail === 'string' &&
    paths.every((p) => res.body?.errors?.some((e: { path: string }) => e.path === p));
  if (!ok) {
    throw new Error(`expected ${status} ${code} at [${paths.join(', ')}], got ${res.status} ${res.text}`);
  }
}

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Statements the service has run so far, by its own counter on `/metrics` (the app needs METRICS_TOKEN = `token`). */
export async function statementsRun(t: TestApp, token: string): Promise<number> {
  const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
  let total = 0;
  for (const line of res.body.split('\n'))
    if (line.startsWith('pam_db_query_duration_seconds_count')) total += Number(line.split(' ').at(-1));
  return total;
}

/**
 * Signs any JSON with the service's key for `purpose`, as none of its signers would: for checking
 * that a genuine signature alone does not make ill-shaped claims acceptable.
 */
export function signAnything(secret: string, purpose: string): (claims: unknown) => string {
  const tokens = signedTokens(secret, purpose, (_: unknown): _ is Claims => false, { maxAgeMs: 0, maxLength: 0 });
  return (claims) => tokens.seal(encodeClaims(claims));
}
