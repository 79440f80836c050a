import type { VersionStatus } from '../db/enums.js';
import type { AudienceVersionsTable } from '../db/types.js';

/**
 * The audience version state machine (the table is in docs/decisions.md#versions):
 *
 *   draft → pending → queued → processing → published      forward only; skipping ahead is allowed
 *   draft | pending | queued | processing → cancelled
 *   published → archived                                    only when a newer version is published
 *
 * Nothing leaves cancelled or archived. Pure functions: the repository applies what they decide.
 */
const FORWARD: readonly VersionStatus[] = ['draft', 'pending', 'queued', 'processing', 'published'];
const CANCELLABLE: readonly VersionStatus[] = ['draft', 'pending', 'queued', 'processing'];

/** Whether a client may move a version from `from` to `to` (a move to the same status is no move). */
export function canMove(from: VersionStatus, to: VersionStatus): boolean {
  if (to === 'cancelled') return CANCELLABLE.includes(from);
  if (to === 'archived') return false; // only publishing a newer version archives
  const i = FORWARD.indexOf(from);
  const j = FORWARD.indexOf(to);
  return i !== -1 && j > i;
}

export type VersionTimes = Pick<AudienceVersionsTable, 'queued_at' | 'queue_duration_ms' | 'published_at' | 'cancelled_at'>;

/** The timestamps a move to `to` at `at` sets; `queueDurationMs` is measured when a version leaves `queued`. */
export function timesOfMove(from: VersionStatus, to: VersionStatus, current: VersionTimes, at: string): Partial<VersionTimes> {
  const times: Partial<VersionTimes> = {};
  if (to === 'queued') times.queued_at = at;
  if (from === 'queued' && current.queued_at !== null) {
    times.queue_duration_ms = Math.max(0, Date.parse(at) - Date.parse(current.queued_at));
  }
  if (to === 'published') times.published_at = at;
  if (to === 'cancelled') times.cancelled_at = at;
  return times;
}
