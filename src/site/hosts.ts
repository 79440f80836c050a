import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import type { HostnameRules } from '../domains/hostnames.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The API app's view of which hosts are tenant domains (domain routes tell it of changes). */
    siteHosts: SiteHosts;
  }
}

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
  /** A domain was added or removed in this process: its answer is read again next time. */
  forget(hostname: string): void;
}

/** How long an answer is kept: another instance's new or removed custom domain is seen within it. */
const KEEP_MS = 5000;
const MAX_ENTRIES = 10_000;

/**
 * Every request asks at the door (site/door.ts) whether its Host is a tenant domain, the API's own
 * requests included, so the answers (found or not) are kept a few seconds rather than read per
 * request: one indexed read per host every 5 s, and nothing on the hot path of the API. Only verified domains are tenant hosts.
 * The API's own hosts (PUBLIC_BASE_URL's, any IP literal, localhost) never are, whatever the table
 * holds: a row that slipped past the rules cannot take the API, the admin API or the console over.
 */
export function siteHosts(db: Kysely<Database>, rules: HostnameRules): SiteHosts {
  const cache = new Map<string, { host: SiteHost | undefined; until: number }>();
  return {
    async lookup(hostHeader) {
      const hostname = normalize(hostHeader);
      if (hostname === undefined || rules.isApiHost(hostname)) return undefined;
      const now = Date.now();
      const kept = cache.get(hostname);
      if (kept && kept.until > now) return kept.host;
      const row = await db
        .selectFrom('tenant_domains')
        .select(['id', 'tenant_id', 'hostname', 'is_fallback'])
        .where('hostname', '=', hostname)
        // Literal, so the partial unique index of verified names answers it.
        .where(sql<boolean>`status = 'verified'`)
        .executeTakeFirst();
      const host = row && { domainId: row.id, tenantId: row.tenant_id, hostname: row.hostname, isFallback: row.is_fallback === 1 };
      if (cache.size >= MAX_ENTRIES) cache.clear();
      cache.set(hostname, { host, until: now + KEEP_MS });
      return host;
    },
    peek(hostHeader) {
      const hostname = normalize(hostHeader);
      if (hostname === undefined) return null;
      // The kept answer first: it is the visitor's hot path (a tenant domain is never an API host).
      const kept = cache.get(hostname);
      if (kept && kept.until > Date.now()) return kept.host ?? null;
      return rules.isApiHost(hostname) ? null : undefined;
    },
    forget(hostname) {
      cache.delete(hostname.toLowerCase());
    },
  };
}

/** `Go.Acme.COM:8443` → `go.acme.com`; a bracketed IPv6 literal or an empty header is no tenant domain. */
function normalize(header: string | undefined): string | undefined {
  if (!header || header.startsWith('[')) return undefined;
  const name = header.replace(/:\d*$/, '').replace(/\.$/, '').toLowerCase();
  return name.length > 0 && name.length <= 253 ? name : undefined;
}
