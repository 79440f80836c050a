import { CACHES, newCache } from '../../db/caches.js';
/**
 * What each visitor path resolved to, kept for as long as its tenant is unchanged.
 *
 * Serving a path reads its link and the stamp of its page and audience on every request, because a
 * change made through the API (by any instance) must show on the very next visit. Every write a
 * visitor could see moves the tenant's change sequence (db/changes.ts, `site:<tenantId>`), so each
 * key starts with the tenant and its sequence (serve/run.ts): a change of the tenant moves the
 * sequence, and the old keys are never asked for again (they fall out, LRU). On PostgreSQL the
 * sequence is read with the path's link in one statement; on SQLite once per committed state
 * (`data_version`), so a commit that changes nothing a visitor sees (a visit recorded, an
 * experiment unit stored) costs one read per tenant, where it once emptied the whole memo.
 */
export interface OutcomeMemo<T> {
  /** The remembered answer for `key`, or undefined. */
  get(key: string): T | undefined;
  set(key: string, value: T): void;
  /** Look-ups answered and not, and the answers held, so far. */
  stats(): { entries: number; hits: number; misses: number };
}

export function outcomeMemo<T extends {}>(maxEntries = 4000, maxBytes = 8 * 1024 * 1024): OutcomeMemo<T> {
  const entries = newCache<T>(CACHES.outcomes, { max: maxEntries, maxBytes });
  let hits = 0;
  let misses = 0;
  return {
    get(key) {
      const found = entries.get(key);
      if (found === undefined) misses++;
      else hits++;
      return found;
    },
    set(key, value) {
      entries.set(key, value);
    },
    stats: () => ({ entries: entries.size, hits, misses }),
  };
}
