import type { Kysely } from 'kysely';
import { CACHES, newCache } from '../db/caches.js';
import { changeCount, movedHereAt } from '../db/changes.js';
import type { Database } from '../db/types.js';
import { type HostnameRules, verifiedDomainNamed } from '../domains/index.js';

/** A tenant domain a visitor request came to. */
export interface SiteHost {
  domainId: string;
  tenantId: string;
  hostname: string;
  isFallback: boolean;
}

export interface SiteHosts {
  /** The tenant domain named by a `Host` header (any case, port ignored), or undefined: the API's host. */
  lookup(hostHeader: string | undefined): Promise<SiteHost | undefined>;
  /**
   * The answer for a Host without reading: a tenant domain; null when it is known to be none (the
   * API's own hosts, and answers kept from a lookup); undefined when only `lookup` can tell.
   */
  peek(hostHeader: string | undefined): SiteHost | null | undefined;
}

/**
 * Without SQLite's `data_version`, how long the `domains` counter is trusted once read: another
 * instance's change is seen within it. For as long after a change of this process, it is read on
 * every look-up, so that this process serves its own change at once.
 */
const KEEP_MS = 5000;

/** An answer, and the `domains` counter read before it was. */
interface Kept {
  host: SiteHost | null;
  changes: number;
}

/**
 * Every request asks at the door (site/door.ts) whether its Host is a tenant domain, the API's own
 * requests included, so the answers (found or not) are kept rather than read per request. Each is
 * kept under the `domains` change counter (src/db/changes.ts), which every transaction that
 * verifies, releases or deletes a domain, or makes a tenant's fallback domain, moves: an answer
 * holds while the counter stands still. On SQLite the counter is read again whenever anything
 * was committed (`data_version`, which moves with any commit of any process), so every instance
 * serves a change at once. Elsewhere it is read at most every 5 s, and on every look-up for 5 s
 * after a change of this process; there a host found is checked again by each served path's first
 * statement (serve/run.ts) and the counter is read again for a host not found, so every instance
 * serves a domain's change at once there too (issue 31). Only verified
 * domains are tenant hosts. The API's own hosts (PUBLIC_BASE_URL's, any IP literal, localhost)
 * never are, whatever the table holds: a row that slipped past the rules cannot take the API, the
 * admin API or the console over.
 */
export function siteHosts(db: Kysely<Database>, rules: HostnameRules, dataVersion?: () => number): SiteHosts {
  const answers = newCache<Kept>(CACHES.hosts);
  let known: { changes: number; readAt: number; version: number | undefined } | undefined;

  const fresh = (): boolean => {
    if (!known) return false;
    if (dataVersion) return dataVersion() === known.version;
    const now = Date.now();
    return now - known.readAt < KEEP_MS && now - movedHereAt(db, 'domains') >= KEEP_MS;
  };
  // The read under way, shared: when the kept counter expires, every request in flight would read it.
  let reading: Promise<number> | undefined;
  const current = async (force: boolean): Promise<number> => {
    if (known && !force && fresh()) return known.changes;
    // A forced read must start after the request: one already under way may miss a commit before it.
    if (reading && !force) return reading;
    const read = (async () => {
      // Both before the read: a commit after them leaves them behind what was read, never ahead.
      const version = dataVersion?.();
      const readAt = Date.now();
      const changes = await changeCount(db, 'domains');
      if (!known || readAt >= known.readAt) known = { changes, readAt, version };
      return changes;
    })();
    if (!force) {
      reading = read;
      void read.then(
        () => (reading = reading === read ? undefined : reading),
        () => (reading = reading === read ? undefined : reading),
      );
    }
    return read;
  };

  return {
    async lookup(hostHeader) {
      const hostname = normalize(hostHeader);
      if (hostname === undefined || rules.isApiHost(hostname)) return undefined;
      const kept = answers.get(hostname);
      // Without `data_version`, "no tenant domain" is kept only while the counter, read again now,
      // stands still: a domain verified through another instance is served here at once (a kept
      // domain is checked again by each served path's first statement, serve/run.ts). Such
      // hosts are rare: the API's own never come here.
      const changes = await current(kept?.host === null && !dataVersion);
      if (kept && kept.changes === changes) return kept.host ?? undefined;
      const row = await verifiedDomainNamed(db, hostname);
      const host = row && { domainId: row.id, tenantId: row.tenant_id, hostname: row.hostname, isFallback: row.is_fallback === 1 };
      answers.set(hostname, { host: host ?? null, changes });
      return host;
    },
    peek(hostHeader) {
      const hostname = normalize(hostHeader);
      if (hostname === undefined) return null;
      // The kept answer first: it is the visitor's hot path (a tenant domain is never an API host).
      const kept = answers.get(hostname);
      if (kept && kept.changes === known?.changes && fresh() && (kept.host !== null || dataVersion)) return kept.host;
      return rules.isApiHost(hostname) ? null : undefined;
    },
  };
}

/** `Go.Acme.COM:8443` → `go.acme.com`; a bracketed IPv6 literal or an empty header is no tenant domain. */
function normalize(header: string | undefined): string | undefined {
  if (!header || header.startsWith('[')) return undefined;
  const name = header.replace(/:\d*$/, '').replace(/\.$/, '').toLowerCase();
  return name.length > 0 && name.length <= 253 ? name : undefined;
}
