import type { Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import { CACHES, type CacheDeclaration, type Invalidation } from './cache-catalogue.js';
import { type ChangeScope, changeCount, changeCountAt, type Freshness, siteSequenceFed } from './changes.js';
import { perDatabase } from './per-database.js';
import type { Database } from './types.js';

// Builds the caches cache-catalogue.ts declares: the one place an lru-cache is made.
export { CACHES, type CacheDeclaration, type Invalidation };

interface Built<V extends {}, FC> {
  /** Bounds a caller may lower (tests, or a cache its owner sizes). */
  max?: number;
  maxBytes?: number;
  fetchMethod?: LRUCache.Fetcher<string, V, FC>;
}

/** What `/metrics` reads of a cache: its entries and their bytes as its declaration sizes them. */
interface Weighed {
  readonly size: number;
  readonly calculatedSize: number;
}

/**
 * Every cache built from a declaration, by the declaration's name in CACHES, held weakly: a cache
 * lives as long as what holds it (an app, an open database), and a test process opens hundreds.
 */
const instances = new Map<string, Set<WeakRef<Weighed>>>();

function track(d: { name: string }, cache: Weighed): void {
  const name = Object.entries(CACHES).find(([, declared]) => declared === d)?.[0] ?? d.name;
  const refs = instances.get(name) ?? new Set<WeakRef<Weighed>>();
  instances.set(name, refs);
  // Forgotten caches are dropped as new ones arrive, so the set stays as small as the live ones.
  if (refs.size >= 16 && (refs.size & (refs.size - 1)) === 0) for (const ref of refs) if (!ref.deref()) refs.delete(ref);
  refs.add(new WeakRef(cache));
}

/**
 * Each declared cache's entries and bytes, summed over its live instances in this process (one per
 * app or open database; a service process has one of each): what `/metrics` shows as
 * `pam_cache_bytes` and `pam_cache_entries` (issue 50: memory bounded by the declared caches).
 */
export function cacheSizes(): { cache: keyof typeof CACHES; entries: number; bytes: number }[] {
  return (Object.keys(CACHES) as (keyof typeof CACHES)[]).map((cache) => {
    let entries = 0;
    let bytes = 0;
    for (const ref of instances.get(cache) ?? []) {
      const live = ref.deref();
      if (!live) continue;
      entries += live.size;
      bytes += live.calculatedSize;
    }
    return { cache, entries, bytes };
  });
}

/**
 * The caches whose entries have a time to live. lru-cache drops an expired entry only when it is
 * next asked for or pushed out, so an answer no one asks for again (a report read once; the
 * pipeline's touches, tens of MB at full scale) stayed for the life of the process. A sweep drops
 * them: one timer for the process, not lru-cache's `ttlAutopurge` (a timer an entry, which the
 * 50,000 companies would pay for).
 */
const expiring = new Set<WeakRef<{ purgeStale(): boolean }>>();
const SWEEP_EVERY_MS = 10_000;
let sweeper: NodeJS.Timeout | undefined;

/** Drops every expired entry of every live cache that has a time to live (the sweep, and tests). */
export function sweepExpired(): void {
  for (const ref of expiring) {
    const cache = ref.deref();
    if (cache) cache.purgeStale();
    else expiring.delete(ref);
  }
  if (expiring.size === 0 && sweeper) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}

function sweepWhenExpired(cache: { purgeStale(): boolean }): void {
  expiring.add(new WeakRef(cache));
  // Unreferenced: the sweep never keeps a process (a CLI command, a test) alive.
  sweeper ??= setInterval(sweepExpired, SWEEP_EVERY_MS).unref();
}

/** Builds a declared cache: its bounds, its sizes and its time to live as the declaration says. */
export function newCache<V extends {}, FC = unknown>(d: CacheDeclaration<V>, built: Built<V, FC> = {}): LRUCache<string, V, FC> {
  const maxBytes = built.maxBytes ?? d.maxBytes;
  const cache = new LRUCache<string, V, FC>({
    max: built.max ?? d.max,
    maxSize: maxBytes,
    sizeCalculation: d.size,
    ...(d.maxEntryBytes === undefined ? {} : { maxEntrySize: Math.min(d.maxEntryBytes, maxBytes / 8) }),
    ...(d.ttlMs === undefined ? {} : { ttl: d.ttlMs, updateAgeOnGet: d.ttlFromLastUse === true }),
    // A fetch still in flight when its entry is swept or pushed out answers whoever asked for it.
    ...(built.fetchMethod === undefined ? {} : { fetchMethod: built.fetchMethod, ignoreFetchAbort: true }),
  });
  track(d, cache);
  if (d.ttlMs !== undefined) sweepWhenExpired(cache);
  return cache;
}

/** A declared cache per open database (`perDatabase`), made at its first use. */
export function databaseCache<V extends {}, FC = unknown>(
  d: CacheDeclaration<V>,
  built: Built<V, FC> = {},
): (db: Kysely<Database>) => LRUCache<string, V, FC> {
  return perDatabase(() => newCache(d, built));
}

/** The counters of one tenant a cache can hang on: each names its tenant, so one is read per answer. */
type TenantCounter = Extract<Invalidation, `${string}:<tenant>`>;
const isTenantCounter = (i: Invalidation): i is TenantCounter => i.endsWith(':<tenant>');

/**
 * A declared cache per open database whose answers are kept under the tenant counters its
 * declaration names (`invalidatedBy`), read before every answer: a change committed meanwhile
 * moves a counter past the key the answer is kept under, on any instance, so an answer from before
 * a change is never asked for again and falls out. `key` names the rest the answer depends on.
 * Given SQLite's `dataVersion` of the request's snapshot, the counters are read once per committed
 * state (changes.ts `changeCountAt`) rather than once per answer; given PostgreSQL's change feed,
 * the tenant's change sequence is read once per change the feed hears of (`siteSequenceFed`).
 */
export function countedCache<V extends {}, FC>(
  d: CacheDeclaration<V>,
  compute: (context: FC) => Promise<V>,
): (db: Kysely<Database>, tenantId: string, key: string, context: FC, freshness?: Freshness) => Promise<V> {
  const counters = d.invalidatedBy.filter(isTenantCounter);
  if (counters.length === 0) throw new Error(`the cache "${d.name}" is declared with no tenant counter`);
  const kept = databaseCache<V, FC>(d, { fetchMethod: (_key, _stale, { context }) => compute(context) });
  return async (db, tenantId, key, context, freshness = {}) => {
    const version = freshness.dataVersion?.();
    const count = (scope: ChangeScope) => {
      if (version !== undefined) return changeCountAt(db, scope, version);
      if (freshness.feed && scope === `site:${tenantId}`) return siteSequenceFed(db, freshness.feed, tenantId);
      return changeCount(db, scope);
    };
    const scopes = counters.map((c) => c.replace('<tenant>', tenantId) as ChangeScope);
    const counts = await Promise.all(scopes.map(count));
    // lru-cache types its options by whether FC is known, which a type parameter leaves open.
    const options: LRUCache.FetchOptionsWithContext<string, V, FC> = { context };
    return kept(db).forceFetch(`${tenantId} ${counts.join(' ')} ${key}`, options as never);
  };
}
