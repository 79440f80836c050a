// Every in-process cache of the service, declared once: its bounds, its sizes and what invalidates it
// (docs/contributing.md's "In-process caches"). caches.ts builds them; import them from there.

const MB = 1024 * 1024;

/**
 * What moves an answer out of a cache: a change counter (db/changes.ts) read with the answer, the
 * committed state's version (SQLite's `data_version`), a change of the key itself (the key names
 * every value the answer depends on), or nothing (the answer never changes, or it is state).
 */
export type Invalidation = 'domains' | 'sessions:<tenant>' | 'site:<tenant>' | 'deals:<tenant>' | 'data_version' | 'new key' | 'nothing';

/** One in-process cache: one row of docs/contributing.md's "In-process caches" (a test holds the two together). */
export interface CacheDeclaration<V extends {}> {
  /** The row's name in the catalogue. */
  name: string;
  /** Where it is used. */
  file: string;
  /** What keys an entry, in words. */
  key: string;
  max: number;
  maxBytes: number;
  /** One entry may take this much at most; larger ones are not kept. */
  maxEntryBytes?: number;
  ttlMs?: number;
  /**
   * The time to live counts from the entry's last use, not its making: for an answer kept under
   * counters, which no time makes wrong, so that one in steady use is never read again in the
   * middle of a load (the whole read stalls every request waiting on it), and an idle one goes.
   */
  ttlFromLastUse?: true;
  /** An entry's bytes, key and value, as kept (UTF-16 strings: two bytes a character). */
  size: (value: V, key: string) => number;
  /** What it hangs on: one open database (`perDatabase`), one app, or the process (a pure function's memo). */
  holds: 'database' | 'app' | 'process';
  invalidatedBy: readonly Invalidation[];
}

const declare = <V extends {}>(d: CacheDeclaration<V>): CacheDeclaration<V> => d;
/** A key string and a small answer beside it. */
const keyed =
  (answerBytes: number) =>
  (_value: unknown, key: string): number =>
    2 * key.length + answerBytes;

/** Every in-process cache of the service, by the name its module builds it with. */
export const CACHES = {
  documents: declare<{ bytes: number }>({
    name: 'Rendered documents',
    file: 'src/site/serve/cache.ts',
    key: 'every value the document depends on (serve/stamp.ts)',
    max: 4000,
    maxBytes: 16 * MB,
    // One document may take an eighth of the whole at most: a few large ones never push out the rest.
    maxEntryBytes: 2 * MB,
    size: (rendered) => Math.max(1, rendered.bytes),
    holds: 'app',
    invalidatedBy: ['new key'],
  }),
  outcomes: declare({
    name: 'Outcome memo',
    file: 'src/site/serve/memo.ts',
    key: 'the tenant and its change sequence, origin, path, ?submitted',
    max: 4000,
    maxBytes: 8 * MB,
    // A stamp and a token's fields at most beside the key.
    size: keyed(512),
    holds: 'app',
    invalidatedBy: ['new key'],
  }),
  hosts: declare<{ host: unknown }>({
    name: 'Site hosts',
    file: 'src/site/hosts.ts',
    key: 'hostname',
    max: 10_000,
    maxBytes: 8 * MB,
    // A hostname is at most 253 characters, with its answer's few strings.
    size: (kept, hostname) => 2 * hostname.length + (kept.host ? 256 : 32),
    holds: 'app',
    invalidatedBy: ['domains', 'data_version'],
  }),
  rankings: declare<readonly unknown[]>({
    name: 'Pages overview rankings',
    file: 'src/analytics/overview.ts',
    key: 'tenant, its sessions counter, range, sort',
    max: 16,
    maxBytes: 32 * MB,
    ttlMs: 10_000,
    // A ranked page: its id and its sums.
    size: (ranked) => 64 + ranked.length * 256,
    holds: 'database',
    invalidatedBy: ['sessions:<tenant>'],
  }),
  funnelResults: declare<{ groups?: readonly unknown[]; steps: readonly unknown[] }>({
    name: 'Funnel results',
    file: 'src/funnels/results.ts',
    key: 'funnel id and updatedAt, its tenant sessions counter, range, grouping',
    max: 256,
    maxBytes: 16 * MB,
    ttlMs: 10_000,
    // With its JSON text beside it (http/kept-json.ts): about 470 characters a group, 60 a step.
    size: (answer) => 1024 + (answer.groups?.length ?? 0) * 3072 + answer.steps.length * 384,
    holds: 'database',
    invalidatedBy: ['sessions:<tenant>', 'new key'],
  }),
  pipeline: declare<{ groups: readonly unknown[] }>({
    name: 'Influenced pipeline',
    file: 'src/deals/pipeline.ts',
    key: 'tenant, its sessions, site and deals counters, range, model, window, half-life, grouping, experiment',
    max: 256,
    maxBytes: 16 * MB,
    ttlMs: 10_000,
    // A group: its key, label and sums in a few currencies, and its JSON text beside it
    // (http/kept-json.ts): about 400 characters, two bytes each.
    size: (answer) => 2048 + answer.groups.length * 1536,
    holds: 'database',
    invalidatedBy: ['sessions:<tenant>', 'site:<tenant>', 'deals:<tenant>'],
  }),
  pipelineTouches: declare<{ bytes: number }>({
    name: 'Pipeline touches',
    file: 'src/deals/touches.ts',
    key: 'tenant, its sessions, site and deals counters, range, grouping, experiment',
    max: 32,
    maxBytes: 128 * MB,
    maxEntryBytes: 64 * MB,
    ttlMs: 60_000,
    ttlFromLastUse: true,
    size: (touches) => touches.bytes,
    holds: 'database',
    invalidatedBy: ['sessions:<tenant>', 'site:<tenant>', 'deals:<tenant>'],
  }),
  servedFiles: declare<{ ids: { size: number } }>({
    name: 'Served files',
    file: 'src/site/serve/served-files.ts',
    key: 'tenant id and its change sequence',
    max: 1000,
    maxBytes: 8 * MB,
    // An id is 31 characters, in a Set.
    size: (entry) => 64 + entry.ids.size * 96,
    holds: 'database',
    invalidatedBy: ['site:<tenant>'],
  }),
  fallbackDomains: declare<string>({
    name: 'Fallback domain ids',
    file: 'src/domains/repository.ts',
    key: 'tenant id',
    max: 10_000,
    maxBytes: 2 * MB,
    size: (id, tenantId) => 2 * (id.length + tenantId.length) + 64,
    holds: 'database',
    invalidatedBy: ['nothing'],
  }),
  experimentArms: declare<string>({
    name: 'Experiment arms',
    file: 'src/experiments/units.ts',
    key: 'experiment id and unit',
    max: 100_000,
    maxBytes: 16 * MB,
    // The key (an id and a unit of at most ~50 characters), the arm, and the entry's own weight.
    size: (arm, key) => 2 * (key.length + arm.length) + 64,
    holds: 'database',
    invalidatedBy: ['nothing'],
  }),
  // A visit sends the same token with every report, and checking its signature again (a new HMAC
  // each time) was a tenth of a report's cost: genuine tokens are remembered with their claims.
  viewTokens: declare({
    name: 'Verified view tokens',
    file: 'src/site/token.ts',
    key: 'the token',
    max: 5000,
    maxBytes: 8 * MB,
    // The claims, frozen.
    size: keyed(512),
    holds: 'app',
    invalidatedBy: ['nothing'],
  }),
  knownVisits: declare({
    name: 'Visits with a session',
    file: 'src/visits/postgres-store.ts',
    key: "the view token's visit id",
    max: 50_000,
    // A visit id is 22 characters (16 random bytes); tokens with longer ones are still counted fairly.
    maxBytes: 8 * MB,
    size: keyed(64),
    holds: 'app',
    invalidatedBy: ['nothing'],
  }),
  keyHashes: declare<string>({
    name: 'API key hashes',
    file: 'src/http/auth.ts',
    key: 'the key',
    max: 10_000,
    // Keys longer than 512 characters are refused before hashing.
    maxBytes: 16 * MB,
    size: (hash, key) => 2 * (key.length + hash.length) + 64,
    holds: 'app',
    invalidatedBy: ['nothing'],
  }),
  userAgents: declare({
    name: 'Parsed user agents',
    file: 'src/site/measure/device.ts',
    key: 'the user agent string (at most 512 characters)',
    max: 2000,
    maxBytes: 2 * MB,
    // Three short strings.
    size: keyed(256),
    holds: 'process',
    invalidatedBy: ['nothing'],
  }),
  keyRows: declare({
    name: 'API key rows',
    file: 'src/http/auth.ts',
    key: "the key's hash",
    max: 10_000,
    maxBytes: 8 * MB,
    // Trusted 1 s at most (KEY_KEEP_MS), and only while the tenant's changes stand still.
    // An id, a tenant id, the scopes, two times, two numbers; keyed by a 64-character hash.
    size: () => 640,
    holds: 'app',
    invalidatedBy: ['site:<tenant>', 'data_version'],
  }),
  timeZones: declare({
    name: 'Time zone names',
    file: 'src/analytics/buckets.ts',
    key: 'the time zone name a query gave',
    max: 1000,
    maxBytes: 1 * MB,
    size: keyed(64),
    holds: 'process',
    invalidatedBy: ['nothing'],
  }),
  rollupStatements: declare<{ update: string; upsert: string }>({
    name: 'Rollup statements',
    file: 'src/visits/rollups.ts',
    key: 'rollup table, number of rows, dialect',
    max: 256,
    maxBytes: 4 * MB,
    size: (s, key) => 2 * (key.length + s.update.length + s.upsert.length) + 64,
    holds: 'process',
    invalidatedBy: ['nothing'],
  }),
  addressBuckets: declare({
    name: 'Visitor rate buckets',
    file: 'src/site/limits.ts',
    key: 'the address, or its /64',
    max: 50_000,
    maxBytes: 8 * MB,
    // The address or prefix, and its two numbers.
    size: keyed(64),
    holds: 'app',
    invalidatedBy: ['nothing'],
  }),
  // Issue 39: the company behind a visitor's network, from the enrichment provider. A day, as the
  // issue asks: a network's owner rarely changes, and the provider is asked once a network a day.
  companies: declare<{ company: unknown }>({
    name: 'Companies by network',
    file: 'src/enrichment/lookup.ts',
    key: 'the visitor address its /24 (IPv4) or /48 (IPv6)',
    max: 50_000,
    maxBytes: 32 * MB,
    ttlMs: 24 * 60 * 60 * 1000,
    // The network, and a company's five short fields (each at most 255 characters) or null.
    size: (known, network) => 2 * network.length + (known.company === null ? 64 : 1024),
    holds: 'app',
    invalidatedBy: ['nothing'],
  }),
  // Issue 45: a segment's rules, compiled (values lowercased, `in` lists as sets) once per change
  // rather than on every view the outcome memo misses (on SQLite, after any commit): the page's
  // segments are read as ids and times, and only a segment changed since is read and compiled.
  segmentRules: declare<{ bytes: number }>({
    name: 'Compiled segment rules',
    file: 'src/site/serve/choose.ts',
    key: "the segment audience's id and its updated_at (moved by every write of its rules)",
    max: 10_000,
    maxBytes: 64 * MB,
    maxEntryBytes: 4 * MB,
    // The stored text's characters, lowercased copies of its values and their sets: four times the text.
    size: (compiled, key) => 2 * key.length + compiled.bytes,
    holds: 'database',
    invalidatedBy: ['new key'],
  }),
  pageSegments: declare<{ segments: readonly unknown[] }>({
    name: "A page's segments",
    file: 'src/site/serve/choose.ts',
    key: 'tenant id, its change sequence, page id',
    max: 4000,
    maxBytes: 8 * MB,
    // Ids and a reference to each compiled rule set, which `segmentRules` weighs (while it keeps it
    // too), and each one's place in the index by a required value (its key's string and a slot).
    size: (kept, key) => 2 * key.length + 256 + kept.segments.length * 260,
    holds: 'database',
    invalidatedBy: ['site:<tenant>', 'data_version'],
  }),
  // Issue 48: the site script asks for its site and live experiences on every page view of the
  // customer's site; both change only with an edit, which moves the tenant's change sequence.
  siteKeyTenants: declare<string>({
    name: 'Site key tenants',
    file: 'src/onsite/snippet/live-site.ts',
    key: "the site's public key",
    max: 10_000,
    maxBytes: 2 * MB,
    size: (tenantId, siteKey) => 2 * (siteKey.length + tenantId.length) + 64,
    holds: 'database',
    invalidatedBy: ['nothing'],
  }),
  liveSites: declare<{ bytes: number }>({
    name: 'Live sites',
    file: 'src/onsite/snippet/live-site.ts',
    key: 'tenant id, its change sequence, site key',
    max: 1000,
    maxBytes: 32 * MB,
    maxEntryBytes: 4 * MB,
    // The experiences as their JSON's characters (UTF-16), their compiled patterns as much again (a site's origins and ids beside them).
    size: (kept, key) => 2 * key.length + 1024 + kept.bytes,
    holds: 'database',
    invalidatedBy: ['site:<tenant>'],
  }),
  keyLastUsed: declare({
    name: 'API key last-used stamps',
    file: 'src/http/auth.ts',
    key: 'the key id',
    max: 10_000,
    maxBytes: 2 * MB,
    size: keyed(64),
    holds: 'app',
    invalidatedBy: ['nothing'],
  }),
} as const;
