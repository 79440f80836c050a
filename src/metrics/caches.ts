import { cacheSizes } from '../db/caches.js';
import type { MetricsRegistry } from './registry.js';

/**
 * Each declared in-process cache's bytes and entries (src/db/caches.ts), labelled by its name in
 * the catalogue (a fixed set): read when scraped, so a cache pays nothing for being watched. What
 * the service's memory holds beyond its working set should add up to these (issue 50).
 */
export function cacheMetrics(metrics: MetricsRegistry): void {
  metrics.gauge(
    'cache_bytes',
    'Bytes an in-process cache holds, as its declaration sizes its entries (src/db/caches.ts)',
    ['cache'],
    (g) => {
      for (const { cache, bytes } of cacheSizes()) g.set({ cache }, bytes);
    },
  );
  metrics.gauge('cache_entries', 'Entries an in-process cache holds (src/db/caches.ts)', ['cache'], (g) => {
    for (const { cache, entries } of cacheSizes()) g.set({ cache }, entries);
  });
}
