import type { Rendered } from '../../render/rendered.js';

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
  const entries = new Map<string, Rendered>();
  let bytes = 0;
  let hits = 0;
  let misses = 0;
  return {
    get(key) {
      const found = entries.get(key);
      if (!found) {
        misses++;
        return undefined;
      }
      hits++;
      entries.delete(key);
      entries.set(key, found);
      return found;
    },
    set(key, value) {
      if (value.bytes > maxBytes / 8) return;
      const old = entries.get(key);
      if (old) {
        bytes -= old.bytes;
        entries.delete(key);
      }
      entries.set(key, value);
      bytes += value.bytes;
      for (const [oldest, entry] of entries) {
        if (entries.size <= maxEntries && bytes <= maxBytes) break;
        entries.delete(oldest);
        bytes -= entry.bytes;
      }
    },
    stats: () => ({ entries: entries.size, bytes, hits, misses }),
  };
}
