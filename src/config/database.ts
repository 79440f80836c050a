import path from 'node:path';
import { ConfigError, type Env, readString } from './read.js';

export type DatabaseConfig =
  | { kind: 'sqlite'; path: string }
  /** `unboundedQueries`: no 2.5 s limit on a query (migrations, bulk loads); the service keeps it. */
  | { kind: 'postgres'; url: string; poolSize: number; unboundedQueries?: boolean; preparedStatements?: 'auto' | 'on' | 'off' };

/**
 * The same database for bulk work (migrations, loads, maintenance): no limit on a query's time.
 * (A pool opens connections as they are asked for: a migration still uses one.)
 */
export function forBulkWork(config: DatabaseConfig): DatabaseConfig {
  return config.kind === 'postgres' ? { ...config, unboundedQueries: true } : config;
}

export const DEFAULT_SQLITE_PATH = path.join('data', 'pam.sqlite');

export function readPoolSize(env: Env): number {
  const raw = readString(env, 'DATABASE_POOL_SIZE');
  if (raw === undefined) return 10;
  const size = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || size < 1 || size > 1000) {
    throw new ConfigError(`DATABASE_POOL_SIZE must be an integer from 1 to 1000, got "${raw}"`);
  }
  return size;
}

/** DATABASE_PREPARED_STATEMENTS: named statements on the hot paths (src/db/named-statements.ts); `auto` by default. */
export function readPreparedStatements(env: Env): 'auto' | 'on' | 'off' {
  const raw = readString(env, 'DATABASE_PREPARED_STATEMENTS');
  if (raw === undefined) return 'auto';
  const value = raw.trim().toLowerCase();
  if (value !== 'auto' && value !== 'on' && value !== 'off') {
    throw new ConfigError(`DATABASE_PREPARED_STATEMENTS must be auto, on or off, got "${raw}"`);
  }
  return value;
}

export function parseDatabaseUrl(
  raw: string | undefined,
  poolSize = 10,
  preparedStatements: 'auto' | 'on' | 'off' = 'auto',
): DatabaseConfig {
  if (raw === undefined) return { kind: 'sqlite', path: DEFAULT_SQLITE_PATH };
  const value = raw.trim();
  if (/^postgres(ql)?:\/\//i.test(value)) {
    if (!URL.canParse(value)) throw new ConfigError('DATABASE_URL is not a valid postgres:// URL');
    return { kind: 'postgres', url: value, poolSize, preparedStatements };
  }
  if (/^sqlite:/i.test(value)) {
    const file = value.replace(/^sqlite:(\/\/)?/i, '');
    if (file === '') throw new ConfigError('DATABASE_URL "sqlite:" needs a file path, e.g. sqlite:./data/pam.sqlite');
    return { kind: 'sqlite', path: file };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    throw new ConfigError(`DATABASE_URL must be sqlite:PATH, a file path or postgres://..., got "${value.split(':')[0]}:..."`);
  }
  return { kind: 'sqlite', path: value };
}
