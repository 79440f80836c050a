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

function openPostgres(url: string, poolSize: number): Db {
  // A request never waits more than 5 s for a connection: a database that is down answers fast.
  const pool = new pg.Pool({ connectionString: url, max: poolSize, types: pgTypes, connectionTimeoutMillis: 5000 });
  // An idle client that loses its connection (a server restart) must not crash the process.
  pool.on('error', () => {});
  // A failed connection attempt is tagged, so it is answered 503 (the pool reconnects by itself later).
  const connect = async () => {
    try {
      return await pool.connect();
    } catch (err) {
      throw Object.assign(err instanceof Error ? err : new Error(String(err)), { code: (err as { code?: string }).code ?? 'DB_UNAVAILABLE' });
    }
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
