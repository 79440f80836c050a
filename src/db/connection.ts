import fs from 'node:fs';
import path from 'node:path';
import {
  Kysely,
  PostgresDialect,
  sql,
  type DatabaseIntrospector,
  type DatabaseMetadataOptions,
  type LogConfig,
  type TableMetadata,
} from 'kysely';
import pg from 'pg';
import type { DatabaseConfig } from '../config.js';
import { changeFeed, type ChangeFeed } from './change-feed.js';
import { isStalePlan, MAX_PER_CONNECTION, nameOf, POOLER_CODES, poolerInUrl, startsOn } from './named-statements.js';
import { isUnavailable } from './errors.js';
import { poolWait } from './pool-wait.js';
import { groupCommitSqlite } from './sqlite.js';
import type { DbObserver } from './observer.js';
import type { Database } from './types.js';

export type Dialect = DatabaseConfig['kind'];

export interface Db {
  kysely: Kysely<Database>;
  dialect: Dialect;
  /** SQLite with a reader only: the committed state's version (src/db/sqlite.ts); changes with every commit. */
  dataVersion?: () => number;
  /** SQLite: called as each request arrives, so that its reads see what was committed before it (src/db/sqlite.ts). */
  requestArrived?: () => void;
  close(): Promise<void>;
  /** PostgreSQL's connection pool, now (for the metrics). */
  poolStats?: () => { total: number; idle: number; waiting: number };
  /** PostgreSQL: the tenants' changes as announced (src/db/change-feed.ts), listening from the first call on. */
  changeFeed?: () => ChangeFeed;
}

/** `log` is Kysely's own: it sees every query executed, prepared ones included (the query-plan test uses it). */
export function openDatabase(config: DatabaseConfig, log?: LogConfig, observer: DbObserver = {}): Db {
  return config.kind === 'postgres' ? openPostgres(config, log, observer) : openSqlite(config.path, log, observer);
}

// PostgreSQL returns what SQLite returns: timestamps as ISO 8601 strings in UTC with milliseconds
// (the service writes milliseconds only) and bigint (counts) as numbers (every bound is <= 2^53 - 1).
const TIMESTAMPTZ = 1184;
const INT8 = 20;
const parseTimestamptz = pg.types.getTypeParser(TIMESTAMPTZ) as (value: string) => Date;
const pgTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === TIMESTAMPTZ) return (value: string) => parseTimestamptz(value).toISOString();
    if (oid === INT8) return (value: string) => Number(value);
    return format === 'binary' ? pg.types.getTypeParser(oid, 'binary') : pg.types.getTypeParser(oid);
  }) as typeof pg.types.getTypeParser,
};

const CONNECT_MS = 2500;
const QUEUE_WAIT_MS = 10_000;

type ConnectCallback = (err: Error | null, client?: pg.Client) => void;

/**
 * A pg client that gives up opening its connection after CONNECT_MS, whatever the pool waits for a
 * free one, and tells `onFailure` when it could not open (the database is down or unreachable).
 */
function quickToConnect(onFailure: (err: Error) => void): typeof pg.Client {
  return class QuickToConnect extends pg.Client {
    constructor(config: pg.ClientConfig = {}) {
      super({ ...config, connectionTimeoutMillis: CONNECT_MS });
    }
    override connect(): Promise<pg.Client>;
    override connect(callback: ConnectCallback): void;
    override connect(callback?: ConnectCallback): Promise<pg.Client> | undefined {
      const opened = super.connect().catch((err: unknown) => {
        const error = err instanceof Error ? err : new Error(String(err));
        onFailure(error);
        throw error;
      });
      if (!callback) return opened;
      opened.then(
        (client) => callback(null, client),
        (err: Error) => callback(err),
      );
      return undefined;
    }
  };
}

/**
 * pg's errors without a SQLSTATE are the connection's own (refused, reset, terminated, timed out):
 * they are tagged so the request is answered 503, never 500.
 */
function tagUnavailable(err: unknown): Error {
  const error = err instanceof Error ? err : new Error(String(err));
  if (!(error as { code?: string }).code) Object.assign(error, { code: 'DB_UNAVAILABLE' });
  return error;
}

/** Whether the database answers a connection of its own, opened and queried within CONNECT_MS each. */
async function probe(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_MS, query_timeout: CONNECT_MS });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
  } finally {
    // Not awaited: ending a connection that never opened may never settle.
    client.end().catch(() => {});
  }
}

function openPostgres(config: Extract<DatabaseConfig, { kind: 'postgres' }>, log: LogConfig | undefined, observer: DbObserver): Db {
  const { url, poolSize } = config;
  // A database that is down or unreachable is answered fast: 2.5 s at most to open a connection
  // and 2.5 s for a query (the service's queries take milliseconds). A burst that finds every
  // connection busy is not an outage: it waits its turn for up to 10 s (the pool's own timeout),
  // unless the database has stopped answering meanwhile (db/pool-wait.ts).
  const wait = poolWait(
    () => pool.connect(),
    CONNECT_MS,
    () => probe(url),
  );
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    types: pgTypes,
    Client: quickToConnect(wait.connectFailed),
    connectionTimeoutMillis: QUEUE_WAIT_MS,
    ...(config.unboundedQueries ? {} : { query_timeout: 2500 }),
    keepAlive: true,
  });
  // An idle client that loses its connection (a server restart) must not crash the process.
  pool.on('error', () => {});
  const prepared = new WeakSet<pg.PoolClient>();
  // Connections on which a query failed for the connection's sake (timed out, reset). Such a
  // connection is closed on release, never lent again: a statement that timed out here still runs
  // on the server, and pg drops a ROLLBACK queued behind it when that times out too, so the
  // connection would come back inside the failed request's transaction, holding its locks.
  const broken = new WeakSet<pg.PoolClient>();
  const setting = config.preparedStatements ?? 'auto';
  const named: NamedState = { on: startsOn(setting, url), auto: setting === 'auto' };
  const connect = async () => {
    let client: pg.PoolClient;
    try {
      client = await wait.acquire();
    } catch (err) {
      throw tagUnavailable(err);
    }
    if (!prepared.has(client)) {
      prepared.add(client);
      // A connection that dies under a running query fails that query; it must not take the process
      // down with an unhandled 'error' event (the pool drops the client when it is released).
      client.on('error', () => {});
      const failed = (err: Error) => {
        broken.add(client);
        wait.queryFailed(err);
      };
      client.query = namedQueries(client, named, observer.query, wait.answered, failed) as typeof client.query;
    }
    // The pool sets `release` anew at each checkout.
    const release = client.release;
    client.release = (err?: Error | boolean) => release(err || broken.has(client));
    return client;
  };
  const dialect = new PostgresDialect({ pool: { connect, end: () => pool.end() } });
  const kysely = new Kysely<Database>({
    dialect: {
      createAdapter: () => dialect.createAdapter(),
      createDriver: () => dialect.createDriver(),
      createQueryCompiler: () => dialect.createQueryCompiler(),
      createIntrospector: currentSchemaIntrospector,
    },
    log,
  });
  const poolStats = () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount });
  let feed: ChangeFeed | undefined;
  const close = async () => {
    await feed?.close();
    await kysely.destroy();
  };
  // LISTEN needs a session of its own: through a transaction-mode pooler nothing is delivered, so
  // there every request reads its key (docs/deployment.md, "PgBouncer").
  const listens = !poolerInUrl(url);
  return {
    kysely,
    dialect: 'postgres',
    close,
    poolStats,
    ...(listens ? { changeFeed: () => (feed ??= changeFeed(url, observer)) } : {}),
  };
}

/** Whether this process names the hot paths' statements (db/named-statements.ts); `auto` may turn it off. */
interface NamedState {
  on: boolean;
  auto: boolean;
}

/**
 * A pool client's `query`, observed (the metrics' query counter and durations), its connection
 * errors tagged, and the hot paths' statements named where allowed (db/named-statements.ts): at
 * most MAX_PER_CONNECTION names a connection; a stale plan prepares the statement again under a
 * new name; `auto` turns names off for the process at the first sign of a transaction-mode pooler.
 * A statement outside a transaction that failed for either reason is run again (it did not run).
 */
function namedQueries(
  client: pg.PoolClient,
  named: NamedState,
  observe: DbObserver['query'],
  answered: () => void,
  failed: (err: Error) => void,
) {
  const raw = client.query.bind(client) as (...args: unknown[]) => unknown;
  /** Each hot statement's name on this connection: its hash, or a new one after a stale plan. */
  const names = new Map<string, string>();
  let renamed = 0;
  let inTransaction = false;
  return (...args: unknown[]): unknown => {
    const text = typeof args[0] === 'string' ? args[0] : undefined;
    if (text !== undefined) {
      if (/^\s*(begin|start transaction)/i.test(text)) inTransaction = true;
      else if (/^\s*(commit|rollback)\b(?!\s+to\b)/i.test(text)) inTransaction = false;
    }
    const hot = named.on && text !== undefined && args.length === 2 && Array.isArray(args[1]) ? nameOf(text) : undefined;
    const name = hot && (names.get(hot) ?? (names.size < MAX_PER_CONNECTION ? hot : undefined));
    if (hot && name) names.set(hot, name);
    const within = inTransaction;
    const attempt = (as: string | undefined) => (as ? raw({ name: as, text, values: args[1] }) : raw(...args));
    const start = performance.now();
    const first = attempt(name);
    if (!(first instanceof Promise)) return first;
    let result: Promise<unknown> = first;
    if (hot && name) {
      result = result.catch((err: unknown) => {
        if (isStalePlan(err)) {
          // The server keeps the old plan under the old name until the connection closes: a new name, parsed anew.
          const fresh = `${hot}_r${++renamed}`;
          names.set(hot, fresh);
          if (!within) return attempt(fresh);
        } else if (named.auto && POOLER_CODES.has(String((err as { code?: string }).code))) {
          named.on = false;
          if (!within) return attempt(undefined);
        }
        throw err;
      });
    }
    const sqlText = text ?? String((args[0] as { text?: unknown } | undefined)?.text ?? '');
    return result.then(
      (value: unknown) => {
        observe?.(sqlText, (performance.now() - start) / 1000, false);
        answered();
        return value;
      },
      (err: unknown) => {
        observe?.(sqlText, (performance.now() - start) / 1000, true);
        const error = tagUnavailable(err);
        if (isUnavailable(error)) failed(error);
        throw error;
      },
    );
  };
}

/**
 * The migrator asks the introspector whether its own tables exist, and Kysely's PostgreSQL
 * introspector reads every column of every schema in the database, looking schemas up by name:
 * slow on a shared database, and it fails when another schema is dropped meanwhile (as parallel
 * test files do). This one lists the tables of the current schema only; columns are not needed.
 */
function currentSchemaIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
  const getTables = async (options?: DatabaseMetadataOptions): Promise<TableMetadata[]> => {
    const rows = await sql<{ name: string; schema: string; kind: string }>`
      select c.relname as name, n.nspname as schema, c.relkind as kind
      from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relkind in ('r', 'v', 'p')
      order by c.relname`.execute(db);
    return rows.rows
      .filter((r) => options?.withInternalKyselyTables || !r.name.startsWith('kysely_migration'))
      .map((r) => ({ name: r.name, schema: r.schema, isView: r.kind === 'v', columns: [] }));
  };
  return {
    getSchemas: async () => (await sql<{ name: string }>`select current_schema() as name`.execute(db)).rows,
    getTables,
    getMetadata: async (options) => ({ tables: await getTables(options) }),
  };
}

function openSqlite(file: string, log: LogConfig | undefined, observer: DbObserver): Db {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const { dialect, dataVersion, requestArrived } = groupCommitSqlite(file, observer);
  const kysely = new Kysely<Database>({ dialect, log });
  return { kysely, dialect: 'sqlite', ...(dataVersion ? { dataVersion } : {}), requestArrived, close: () => kysely.destroy() };
}
