import { createHash } from 'node:crypto';

/**
 * Named (server-side) prepared statements on PostgreSQL, for the hot paths' statements: the ones
 * compiled once by db/prepared.ts (the key lookup, reading by id, the served path's first read,
 * the collector's write). A named statement is parsed and planned once per connection, then only
 * bound and run. `DATABASE_PREPARED_STATEMENTS` (src/config/database.ts): `on`, `off`, or `auto`:
 * off when the connection string names a transaction-mode pooler (`pgbouncer=true`, or PgBouncer's
 * port 6432), else on until the server answers as such a pooler does (a statement prepared on one
 * server connection missing on the next), when they go off for the process.
 *
 * The hazards (docs/benchmarks-history.md): a pooler in transaction mode hands each transaction any
 * server connection, where the statement may not exist (handled as above); a schema change under a
 * prepared `select *` fails with "cached plan must not change result type" (the statement is
 * dropped and prepared again, and a statement outside a transaction is run again); and every
 * named statement holds memory on its server connection (at most MAX_PER_CONNECTION per connection).
 */

/** Statements this process names, by their text: the name is a hash of the text, so one name is one text everywhere. */
const hot = new Map<string, string>();

/** Marks a statement's text as a hot path's (db/prepared.ts calls it once per template). */
export function registerHot(text: string): void {
  if (!hot.has(text)) hot.set(text, `pam_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`);
}

export const nameOf = (text: string): string | undefined => hot.get(text);

/** Named statements held per connection at most: beyond this, the rest run unnamed. */
export const MAX_PER_CONNECTION = 64;

export type PreparedSetting = 'auto' | 'on' | 'off';

/** Whether named statements start on, for the setting and the connection string. */
export function startsOn(setting: PreparedSetting, url: string): boolean {
  if (setting !== 'auto') return setting === 'on';
  return !poolerInUrl(url);
}

/** A transaction-mode pooler as its connection string shows one: `pgbouncer=true`, or PgBouncer's default port. */
export function poolerInUrl(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.searchParams.get('pgbouncer') === 'true' || parsed.port === '6432';
  } catch {
    return false;
  }
}

/** SQLSTATEs of a statement name the server connection does not know, or already knows: a pooler switched connections. */
export const POOLER_CODES = new Set(['26000', '42P05']);

/** "cached plan must not change result type": the table changed under a prepared statement. */
export const isStalePlan = (err: unknown): boolean =>
  (err as { code?: string }).code === '0A000' && /cached plan must not change result type/.test(String((err as Error).message));
