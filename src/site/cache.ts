import { createHash } from 'node:crypto';

/**
 * A rendered document: its text around the token slots (each visit's response is these with its
 * token between them), its ETag, and its size in UTF-8.
 *
 * Text, not bytes: a string response goes out with its headers in one write, where a buffer goes
 * out as a second chunk after a copy of the parts into one buffer; measured, the string is 10–18%
 * more documents a second (BENCHMARKS.md, session 8).
 */
export interface Rendered {
  parts: string[];
  etag: string;
  bytes: number;
  /** The `X-Robots-Tag` it is served with, if any. */
  robots: string | undefined;
  /** Its title, as a visit's session records it. */
  title: string;
}

export interface DocumentCache {
  get(key: string): Rendered | undefined;
  set(key: string, value: Rendered): void;
  stats(): { entries: number; bytes: number; hits: number; misses: number };
}

/** A strong ETag of the document without its token: the same for every visit of the same rendering. */
export function renderedOf(html: string, slot: string, about: Pick<Rendered, 'robots' | 'title'>): Rendered {
  const parts = html.split(slot);
  const hash = createHash('sha256');
  let bytes = 0;
  for (const part of parts) {
    hash.update(part, 'utf8');
    bytes += Buffer.byteLength(part);
  }
  return { parts, etag: `"${hash.digest('base64url')}"`, bytes, ...about };
}

/**
 * Least recently used, bounded by entries and by bytes (a page may hold 50 sections of 20,000
 * characters each: a megabyte). Keys name every value a document depends on (site/stamp.ts), so
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
