import type { MetricsRegistry } from './registry.js';
import { setCounter } from './registry.js';

/** What the visitor plane counts in its caches (src/site/context.ts, DocumentStats). */
export interface SiteCacheStats {
  cache: { entries: number; bytes: number; hits: number; misses: number };
  memo: { entries: number; hits: number; misses: number };
}

/**
 * The visitor plane's document cache and outcome memo, as counted by the plane itself: read when
 * scraped, so serving a page pays nothing for them. Per process (each has its own caches).
 */
export function siteCacheMetrics(metrics: MetricsRegistry, read: () => SiteCacheStats): void {
  const counters = [
    ['site_document_cache_hits_total', 'Rendered documents served from the document cache', (s: SiteCacheStats) => s.cache.hits],
    ['site_document_cache_misses_total', 'Document cache look-ups that had to render', (s: SiteCacheStats) => s.cache.misses],
    [
      'site_outcome_memo_hits_total',
      'Visitor path look-ups whose outcome the memo knew, without reading the database (SQLite)',
      (s: SiteCacheStats) => s.memo.hits,
    ],
    [
      'site_outcome_memo_misses_total',
      'Outcome memo look-ups that had to read the database (SQLite)',
      (s: SiteCacheStats) => s.memo.misses,
    ],
  ] as const;
  for (const [name, help, of] of counters) metrics.counter(name, help, [], (c) => setCounter(c, of(read())));
  metrics.gauge('site_document_cache_entries', 'Rendered documents held in the document cache', [], (g) => g.set(read().cache.entries));
  metrics.gauge('site_document_cache_bytes', 'Bytes of the rendered documents held in the document cache', [], (g) =>
    g.set(read().cache.bytes),
  );
  metrics.gauge('site_outcome_memo_entries', 'Visitor paths whose outcome the memo holds (SQLite)', [], (g) => g.set(read().memo.entries));
}
