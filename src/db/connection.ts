import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type SqliteDatabase } from 'kysely';
import pg from 'pg';
import type { DatabaseConfig } from '../config.js';
import type { Database } from './types.js';

export type Dialect = DatabaseConfig['kind'];

export interface Db {
  kysely: Kysely<Database>;
  dialect: Dialect;
  close(): Promise<void>;
}

export function openDatabase(config: DatabaseConfig): Db {
  return config.kind === 'postgres' ? openPostgres(config.url, config.poolSize) : openSqlite(config.path);
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

/**
 * pg's errors without a SQLSTATE are the connection's own (refused, reset, terminated, timed out):
 * they are tagged so the request is answered 503, never 500.
 */
function tagUnavailable(err: unknown): Error {
  const error = err instanceof Error ? err : new Error(String(err));
  if (!(error as { code?: string }).code) Object.assign(error, { code: 'DB_UNAVAILABLE' });
  return error;
}

function openPostgres(url: string, poolSize: number): Db {
  // A database that is down or unreachable is answered fast: 2.5 s at most to get a connection and
  // 2.5 s for a query (the service's queries take milliseconds), so a request waits 5 s at worst.
  const pool = new pg.Pool({ connectionString: url, max: poolSize, types: pgTypes, connectionTimeoutMillis: 2500, query_timeout: 2500, keepAlive: true });
  // An idle client that loses its connection (a server restart) must not crash the process.
  pool.on('error', () => {});
  const prepared = new WeakSet<pg.PoolClient>();
  const connect = async () => {
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (err) {
      throw tagUnavailable(err);
    }
    if (!prepared.has(client)) {
      prepared.add(client);
      // A connection that dies under a running query fails that query; it must not take the process
      // down with an unhandled 'error' event (the pool drops the client when it is released).
      client.on('error', () => {});
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      client.query = ((...args: unknown[]) => {
        const result = query(...args);
        return result instanceof Promise ? result.catch((err: unknown) => { throw tagUnavailable(err); }) : result;
      }) as typeof client.query;
    }
    return client;
  };
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool: { connect, end: () => pool.end() } }) });
  return { kysely, dialect: 'postgres', close: () => kysely.destroy() };
}

function openSqlite(file: string): Db {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  // NORMAL in WAL mode survives a process crash (kill -9); only a power loss can drop the last commits.
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  // The CLI may write while a server runs on the same file: wait for the lock instead of failing.
  sqlite.pragma('busy_timeout = 5000');
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  return { kysely, dialect: 'sqlite', close: () => kysely.destroy() };
}

/**
 * Kysely prepares every statement on every query; preparing costs more than running a short
 * query, so statements are kept by their SQL text (bounded: queries whose text varies, such as
 * IN lists of different lengths, stop being cached once the cache is full).
 */
function withStatementCache(sqlite: SQLite.Database, max = 1000): SqliteDatabase {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      let statement = statements.get(sql);
      if (!statement) {
        statement = sqlite.prepare(sql);
        if (statements.size < max) statements.set(sql, statement);
      }
      return statement;
    },
  };
}
