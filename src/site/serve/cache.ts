import type { Rendered } from '../../render/index.js';
import { CACHES, newCache } from '../../db/caches.js';

export interface DocumentCache {
  get(key: string): Rendered | undefined;
  set(key: string, value: Rendered): void;
  stats(): { entries: number; bytes: number; hits: number; misses: number };
}

/**
 * Least recently used, bounded by entries and by bytes (a page may hold 50 sections of 20,000
 * characters each: a megabyte). Keys name every value a document depends on (serve/stamp.ts), so
 * an entry is never stale, only unused: nothing expires by time, old keys fall out.
 */
export function documentCache(maxEntries = 4000, maxBytes = 16 * 1024 * 1024): DocumentCache {
  const entries = newCache<Rendered>(CACHES.documents, { max: maxEntries, maxBytes });
  let hits = 0;
  let misses = 0;
  return {
    get(key) {
      const found = entries.get(key);
      if (found) hits++;
      else misses++;
      return found;
    },
    set(key, value) {
      entries.set(key, value);
    },
    stats: () => ({ entries: entries.size, bytes: entries.calculatedSize, hits, misses }),
  };
}
