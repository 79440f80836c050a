import type { Kysely } from 'kysely';
import type { Db } from '../db/connection.js';
import type { Database } from '../db/types.js';
import { consumerBacklog } from '../events/index.js';
import type { Series } from './accumulators.js';
import type { MetricsRegistry } from './registry.js';

const KINDS = new Set([
  'select',
  'insert',
  'update',
  'delete',
  'merge',
  'with',
  'begin',
  'commit',
  'rollback',
  'savepoint',
  'release',
  'pragma',
]);

/** A statement is counted under its first keyword when it is one of a few known ones, else `other`. */
export function operationKind(sql: string): string {
  const word = /^\s*([a-z]+)/i.exec(sql)?.[1]?.toLowerCase() ?? '';
  return KINDS.has(word) ? word : 'other';
}

export function databaseMetrics(metrics: MetricsRegistry) {
  const queries = metrics.hotHistogram(
    'db_query_duration_seconds',
    'Database query duration by operation kind, and whether it failed',
    [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  );
  const series = new Map<string, Series>();
  const bySql = new Map<string, Series>();
  const seriesOf = (operation: string, outcome: string): Series => {
    const key = `${operation} ${outcome}`;
    let found = series.get(key);
    if (!found) {
      found = queries.series({ operation, outcome });
      series.set(key, found);
    }
    return found;
  };
  const groupCommits = metrics.histogram(
    'sqlite_group_commit_size',
    'Write transactions and statements committed together by one SQLite commit',
    [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
  );
  return {
    /** Every statement the database layer runs (src/db/sqlite.ts, src/db/connection.ts), with its duration. */
    query(sql: string, seconds: number, failed: boolean): void {
      if (failed) {
        seriesOf(operationKind(sql), 'error').observe(seconds);
        return;
      }
      // Statements are mostly the same few strings (prepared and cached ones): their series is remembered.
      let found = bySql.get(sql);
      if (!found) {
        if (bySql.size >= 1000) bySql.clear();
        found = seriesOf(operationKind(sql), 'ok');
        bySql.set(sql, found);
      }
      found.observe(seconds);
    },
    /** The SQLite dialect's group commit: how many members shared it. */
    groupCommitted(members: number): void {
      groupCommits.observe(members);
    },
    /** PostgreSQL's connection pool, read when scraped. */
    watchPool(db: Db): void {
      const pool = db.poolStats;
      if (!pool) return;
      metrics.gauge('db_pool_size', 'PostgreSQL connections open (idle and in use)', [], (g) => g.set(pool().total));
      metrics.gauge('db_pool_idle', 'PostgreSQL connections open and idle', [], (g) => g.set(pool().idle));
      metrics.gauge('db_pool_waiting', 'Queries waiting for a PostgreSQL connection', [], (g) => g.set(pool().waiting));
    },
  };
}

/**
 * The webhook backlog, read from the database when scraped (two index look-ups and one count):
 * so every instance reports the same backlog, whichever of them delivers.
 */
export function webhookBacklogMetrics(metrics: MetricsRegistry, db: Kysely<Database>): void {
  metrics.gauge('webhook_events_pending', 'Events not yet fanned out to their subscriptions', [], async (g) => {
    g.set((await consumerBacklog(db, 'webhooks')).pending);
  });
  metrics.gauge('webhook_deliveries_pending', 'Deliveries waiting for an attempt (due now or retrying later)', [], async (g) => {
    const row = await db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'pending')
      .executeTakeFirst();
    g.set(Number(row?.n ?? 0));
  });
  metrics.gauge(
    'webhook_oldest_pending_age_seconds',
    'How late the oldest outstanding webhook work is: an event not fanned out since, or a delivery due since (0: none)',
    [],
    async (g) => {
      const now = new Date().toISOString();
      const [event, delivery] = await Promise.all([
        consumerBacklog(db, 'webhooks').then((backlog) => ({ at: backlog.oldestAt })),
        db
          .selectFrom('webhook_deliveries')
          .select((eb) => eb.fn.min('next_attempt_at').as('at'))
          .where('status', '=', 'pending')
          .where('next_attempt_at', '<=', now)
          .executeTakeFirst(),
      ]);
      const oldest = [event?.at, delivery?.at].filter((at): at is string => typeof at === 'string').map((at) => Date.parse(at));
      g.set(oldest.length === 0 ? 0 : Math.max(0, (Date.now() - Math.min(...oldest)) / 1000));
    },
  );
}
