import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { type HeldIntegration, saveProgress } from './repository.js';

/**
 * How long a claim, or a renewal, holds an integration's sync: a holder killed mid-sync (kill -9)
 * frees it this soon, and the next holder resumes from the cursor saved after the last page.
 */
export const LEASE_MS = 15_000;
/** Renewed this often while the holder lives: a slow CRM (retries, long answers) never outlasts it. */
const RENEW_MS = 5_000;
/**
 * A lease not renewed (the database unreachable, say) stops the holder's CRM calls this long before
 * it ends, so a next holder never calls the CRM while this one still does.
 */
const MARGIN_MS = 3_000;

/** A sync's hold on its integration's lease, renewed in the background until `end`. */
export interface SyncHold {
  /** Aborted when the lease was lost, or is about to end unrenewed: the CRM calls stop. */
  signal: AbortSignal;
  /**
   * Every write under the lease goes through here, one at a time with the renewals: a renewal
   * moves the lease end, which is the token each write checks (db/lease.ts).
   */
  guard<T>(write: (held: HeldIntegration) => Promise<T>): Promise<T>;
  /** Stops renewing, once the writes under way are done; the lease end it leaves is `held.until`. */
  end(): Promise<HeldIntegration>;
}

export function holdLease(db: Kysely<Database>, id: string, until: string): SyncHold {
  const held: HeldIntegration = { id, until };
  const controller = new AbortController();
  let chain: Promise<unknown> = Promise.resolve();
  const guard = <T>(write: (held: HeldIntegration) => Promise<T>): Promise<T> => {
    const next = chain.then(() => write(held));
    chain = next.catch(() => undefined);
    return next;
  };
  let deadline: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(deadline);
    const left = Date.parse(held.until) - Date.now() - MARGIN_MS;
    deadline = setTimeout(() => controller.abort(new Error('the sync lease ran out before it could be renewed')), Math.max(0, left));
    deadline.unref();
  };
  arm();
  const renewing = setInterval(() => {
    guard(async () => {
      if (controller.signal.aborted) return;
      const next = new Date(Date.now() + LEASE_MS).toISOString();
      if (await saveProgress(db, held, { sync_lease_until: next })) {
        held.until = next;
        arm();
      } else controller.abort(new Error('the sync lease was taken over'));
    }).catch(() => {
      // The database did not answer: tried again at the next tick, and the deadline stops the sync if it lasts.
    });
  }, RENEW_MS);
  renewing.unref();
  return {
    signal: controller.signal,
    guard,
    end: async () => {
      clearInterval(renewing);
      await chain;
      clearTimeout(deadline);
      return held;
    },
  };
}
