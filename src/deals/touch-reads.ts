import type { Kysely } from 'kysely';
import { isPostgres } from '../db/adapter.js';
import type { Database } from '../db/types.js';
import { AppError } from '../http/errors.js';
import type { PipelineGroupBy } from './pipeline-schemas.js';

/** What every reader of a pipeline's touches shares (touches.ts, experience-touches.ts): the ask, the deals read, the bounds. */
export interface TouchAsk {
  db: Kysely<Database>;
  tenantId: string;
  start: string;
  end: string;
  groupBy: PipelineGroupBy;
  experimentId: string | null;
}

/** Deals created in the range, at most: beyond, the range is refused (docs/analytics.md). */
export const MAX_PIPELINE_DEALS = 25_000;
/** Persons of the deals' accounts, and sessions read through them, at most each. */
export const MAX_PIPELINE_SESSIONS = 1_000_000;

/**
 * Rows a statement reads at most (deals, persons), and ids it names (persons, for their sessions).
 * SQLite holds the loop for a whole statement; PostgreSQL's rows are parsed as they arrive, where
 * round trips cost more than rows, so its statements are larger.
 */
export const sizes = (db: Kysely<Database>) => (isPostgres(db) ? { rows: 5000, ids: 1000 } : { rows: 500, ids: 200 });

/** PostgreSQL has no year 0: a window never reaches before the first instant it takes. */
export const FIRST_INSTANT = Date.parse('0001-01-01T00:00:00.000Z');

export const tooLarge = (what: string) =>
  new AppError('validation_failed', `${what}: narrow startDate and endDate`, [
    { path: '/startDate', message: what },
    { path: '/endDate', message: what },
  ]);

/** The deals read, in createdAt order, each with its account's index. */
export interface Deals {
  account: number[];
  created: number[];
  cents: number[];
  currency: number[];
  won: number[];
  currencies: string[];
  /** Account (by its domain, which links its persons) → index, and each account's first and last deal. */
  accounts: Map<string, number>;
  first: number[];
  last: number[];
}

export const iso = (ms: number) => new Date(Math.max(ms, FIRST_INSTANT)).toISOString();
