import { CACHES, newCache } from '../../db/caches.js';
/**
 * What each visitor path resolved to, kept for as long as the database is unchanged.
 *
 * Serving a path reads its link and the stamp of its page and audience on every request, because a
 * change made through the API (by any instance) must show on the very next visit. On SQLite one
 * number says whether anything changed at all: the reader's `data_version`, which moves with every
 * commit of any connection, in this process or another. While it stays the same, the last answer
 * for a path is still the answer, and the reads can be skipped. Any commit (a visit recorded
 * included) drops the whole memo: coarse, but never stale. PostgreSQL has no such number; there the
 * version is a constant and each key starts with the tenant and its change sequence (db/changes.ts,
 * `site:<tenantId>`), read with the path's link in one statement (serve/run.ts): a change of
 * the tenant moves the sequence, and the old keys are never asked for again (they fall out, LRU).
 */
export interface OutcomeMemo<T> {
  /** The remembered answer for `key` at `version`, or undefined. */
  get(version: number, key: string): T | undefined;
  set(version: number, key: string, value: T): void;
  /** Look-ups answered and not, and the answers held, so far. */
  stats(): { entries: number; hits: number; misses: number };
}

export function outcomeMemo<T extends {}>(maxEntries = 4000, maxBytes = 8 * 1024 * 1024): OutcomeMemo<T> {
  let at = -1;
  const entries = newCache<T>(CACHES.outcomes, { max: maxEntries, maxBytes });
  let hits = 0;
  let misses = 0;
  const sync = (version: number) => {
    if (version === at) return;
    entries.clear();
    at = version;
  };
  return {
    get(version, key) {
      sync(version);
      const found = entries.get(key);
      if (found === undefined) misses++;
      else hits++;
      return found;
    },
    set(version, key, value) {
      sync(version);
      entries.set(key, value);
    },
    stats: () => ({ entries: entries.size, hits, misses }),
  };
}
