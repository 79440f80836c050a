import type { Kysely } from 'kysely';
import { claimLeases, releaseLease } from '../db/lease.js';
import type { Database } from '../db/types.js';
import { type AttemptOutcome, nextAttempt } from './retry-policy.js';
import type { SendResult } from './send.js';

/**
 * A delivery queue: rows that each wait to be sent somewhere, attempted until sent or given up,
 * claimed by lease (db/lease.ts: a conditional UPDATE, on SQLite and PostgreSQL alike, so a holder
 * killed mid-attempt leaves a lease that simply ends and the row is sent again). Webhook deliveries
 * and alert messages are two such queues; their tables share these columns, and this module is what
 * both start, claim, record and give up rows by, on one retry schedule (retry-policy.ts). Each
 * table stays its owner's: the lint checks the table named where `claimDueAttempts` and
 * `releaseAttempt` are called (in the claim, or in the held row's type), as it does for a lease.
 */
export type DeliveryQueue = 'webhook_deliveries' | 'alert_messages';

/** The columns of one queued attempt, alike in every queue. */
export type QueuedAttempt = Pick<
  Database[DeliveryQueue],
  'status' | 'attempts' | 'next_attempt_at' | 'last_attempt_at' | 'last_response_status' | 'last_error' | 'lease_until' | 'created_at'
>;

/** A new row's attempt columns: pending, due at once. */
export function firstAttempt(at: string): QueuedAttempt {
  return {
    status: 'pending',
    attempts: 0,
    next_attempt_at: at,
    last_attempt_at: null,
    last_response_status: null,
    last_error: null,
    lease_until: null,
    created_at: at,
  };
}

/** Up to `limit` pending rows whose attempt is due, earliest first, leased until `until`. */
export function claimDueAttempts<T extends DeliveryQueue>(
  db: Kysely<Database>,
  claim: { table: T; limit: number; until: string; now: string },
): Promise<Database[T][]> {
  // Typed as one of the queues: the statement touches only the attempt columns, alike in both.
  return claimLeases(db, {
    table: claim.table as 'webhook_deliveries',
    lease: 'lease_until',
    due: (eb) => eb.and([eb('status', '=', 'pending'), eb('next_attempt_at', '<=', claim.now)]),
    orderBy: 'next_attempt_at',
    limit: claim.limit,
    now: claim.now,
    until: claim.until,
  }) as Promise<unknown> as Promise<Database[T][]>;
}

/**
 * Records an attempt's outcome and frees the row, only while the lease `until` is still the caller's;
 * false when it is not (the row was claimed again meanwhile), and nothing is written.
 */
export function releaseAttempt<T extends DeliveryQueue>(
  db: Kysely<Database>,
  held: HeldAttempt<T>,
  changes: Partial<QueuedAttempt> = {},
): Promise<boolean> {
  const table = held.table as 'webhook_deliveries';
  return releaseLease(db, { table, lease: 'lease_until', id: held.id, until: held.until }, changes);
}

/** A claimed row, as its sender holds it: the lease end the claim set is its token. */
export interface HeldAttempt<T extends DeliveryQueue> {
  table: T;
  id: string;
  until: string;
}

/** The row as the claim returned it, held by this sender; undefined for a row the claim did not lease. */
export function heldAttempt<T extends DeliveryQueue>(
  table: T,
  row: { id: string; lease_until: string | null },
): HeldAttempt<T> | undefined {
  return row.lease_until === null ? undefined : { table, id: row.id, until: row.lease_until };
}

/**
 * What an attempt that got `result` writes to its row (with `releaseAttempt`), on the retry schedule:
 * succeeded, pending again at the schedule's next delay (or the receiver's Retry-After), or failed
 * once the schedule has run out. `attempts` are those made before this one; `at` is the outcome's time.
 */
export function attemptOutcome(attempt: { attempts: number; schedule: readonly number[]; result: SendResult }): {
  outcome: AttemptOutcome;
  at: string;
  changes: Partial<QueuedAttempt>;
} {
  const nowMs = Date.now();
  const at = new Date(nowMs).toISOString();
  const outcome = nextAttempt({ ...attempt, now: nowMs, random: Math.random() });
  const changes = {
    status: outcome.status,
    attempts: outcome.attempts,
    last_attempt_at: at,
    last_response_status: attempt.result.status ?? null,
    last_error: outcome.lastError,
    next_attempt_at: outcome.nextAttemptAt,
  };
  return { outcome, at, changes };
}

/** What a row ended without being sent (its target is gone or unreadable) writes: failed, with why; `at` when a time is shown. */
export function givenUp(lastError: string, at?: string): Partial<QueuedAttempt> {
  return { status: 'failed', last_error: lastError, next_attempt_at: null, ...(at === undefined ? {} : { last_attempt_at: at }) };
}
