import { randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { perDatabase } from '../db/per-database.js';
import type { Database, SitesTable } from '../db/types.js';
import type { FieldError } from '../http/errors.js';
import { keysetList, NEWEST_FIRST } from '../http/pagination.js';
import { settle, throwIfAny } from '../http/round-trip.js';
import { newId } from '../ids.js';
import { after, now } from '../time.js';
import { type Site, type SiteCreate, type SiteListQuery, SiteUpdate } from './schemas.js';

/** A site as the visitor plane reads it (by its public key): whose it is and where its script may run. */
export interface SiteRecord {
  siteId: string;
  tenantId: string;
  name: string;
  /** Lowercased `scheme://host[:port]`, as `Origin` headers and `location.origin` say them. */
  origins: string[];
  siteKey: string;
  lastSeenAt: string | null;
}

export const originsOf = (row: Pick<SitesTable, 'origins'>): string[] => JSON.parse(row.origins) as string[];

const toRecord = (row: SitesTable): SiteRecord => ({
  siteId: row.id,
  tenantId: row.tenant_id,
  name: row.name,
  origins: originsOf(row),
  siteKey: row.site_key,
  lastSeenAt: row.last_seen_at,
});

/** The HTML a site puts in its head: the script, named by the site's public key. */
export const snippetOf = (publicBaseUrl: string, siteKey: string): string =>
  `<script src="${publicBaseUrl}/_pam/site.js?site=${siteKey}"></script>`;

export const toSite = (publicBaseUrl: string, row: SitesTable): Site => ({
  siteId: row.id,
  name: row.name,
  origins: originsOf(row),
  siteKey: row.site_key,
  snippet: snippetOf(publicBaseUrl, row.site_key),
  lastSeenAt: row.last_seen_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** 16 random bytes, base64url: it names the site in the page and nothing else (not its id, not its tenant). */
export const newSiteKey = (): string => randomBytes(16).toString('base64url');

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1']);
const HOST = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$|^\[[0-9a-f:.]+\]$/;

/** An origin as written → its normalised form, or a message for its pointer. */
export function parseOrigin(written: string): { origin: string } | { problem: string } {
  const words = 'must be an origin, scheme://host[:port], without path, query or fragment';
  const url = URL.parse(written);
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) return { problem: `${words}, with https (or http for localhost)` };
  if (url.username || url.password) return { problem: `${words}, and without user or password` };
  // The URL parser adds a path of `/`; anything written after the authority is refused.
  const authority = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*$/i;
  if (!authority.test(written)) return { problem: words };
  const host = url.hostname;
  if (!HOST.test(host)) return { problem: `${words}: "${host}" is not a host name` };
  if (url.protocol === 'http:' && !(LOOPBACK_HOSTS.has(host) || host.endsWith('.localhost'))) {
    return { problem: 'must be https (http only for localhost, *.localhost and 127.0.0.1)' };
  }
  return { origin: url.origin };
}

/** The origins normalised, or a 400 naming each bad or repeated one at `/origins/{i}`. */
export function checkOrigins(written: string[]): string[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  const origins: string[] = [];
  for (const [i, o] of written.entries()) {
    const parsed = parseOrigin(o);
    if ('problem' in parsed) errors.push({ path: `/origins/${i}`, message: parsed.problem });
    else if (seen.has(parsed.origin)) errors.push({ path: `/origins/${i}`, message: `repeats ${parsed.origin}` });
    else {
      seen.add(parsed.origin);
      origins.push(parsed.origin);
    }
  }
  throwIfAny(errors);
  return origins;
}

export async function createSite(trx: Transaction<Database>, publicBaseUrl: string, tenantId: string, input: SiteCreate): Promise<Site> {
  const origins = checkOrigins(input.origins);
  const at = now();
  const row: SitesTable = {
    id: newId('site'),
    tenant_id: tenantId,
    name: input.name,
    origins: JSON.stringify(origins),
    site_key: newSiteKey(),
    last_seen_at: null,
    created_at: at,
    updated_at: at,
  };
  await trx.insertInto('sites').values(row).execute();
  return toSite(publicBaseUrl, row);
}

export function findSite(db: Kysely<Database>, tenantId: string, siteId: string) {
  return db.selectFrom('sites').selectAll().where('id', '=', siteId).where('tenant_id', '=', tenantId).executeTakeFirst();
}

export async function updateSite(trx: Transaction<Database>, publicBaseUrl: string, current: SitesTable, body: SiteUpdate): Promise<Site> {
  const shown = toSite(publicBaseUrl, current);
  const patch = settle(SiteUpdate, body, shown);
  const changes: Partial<SitesTable> = {};
  if (patch.name !== undefined && patch.name !== current.name) changes.name = patch.name;
  if (patch.origins !== undefined) {
    const origins = JSON.stringify(checkOrigins(patch.origins));
    if (origins !== current.origins) changes.origins = origins;
  }
  if (Object.keys(changes).length === 0) return shown;
  changes.updated_at = after(current.updated_at);
  const row = await trx.updateTable('sites').set(changes).where('id', '=', current.id).returningAll().executeTakeFirstOrThrow();
  return toSite(publicBaseUrl, row);
}

/** A site goes with its experiences (experiences-repository.ts deletes them first, in the same transaction). */
export async function deleteSiteRow(trx: Transaction<Database>, current: SitesTable): Promise<void> {
  await trx.deleteFrom('sites').where('id', '=', current.id).execute();
}

const sitesList = keysetList({ name: 'sites', table: 'sites', ...NEWEST_FIRST });

export async function listSites(db: Kysely<Database>, publicBaseUrl: string, tenantId: string, query: SiteListQuery) {
  const matching = db.selectFrom('sites').where('tenant_id', '=', tenantId);
  return sitesList.read({ query, rows: matching.selectAll(), count: matching, map: (row) => toSite(publicBaseUrl, row) });
}

/** The site a snippet names, with its tenant and origins; undefined for a key of no site. */
export async function siteByKey(db: Kysely<Database>, siteKey: string): Promise<SiteRecord | undefined> {
  const row = await db.selectFrom('sites').selectAll().where('site_key', '=', siteKey).executeTakeFirst();
  return row && toRecord(row);
}

const SEEN_EVERY_MS = 60_000;
/** When this process last stamped each site (siteId → ms), so a busy site costs one write a minute. */
const stamped = perDatabase(() => new Map<string, number>());
const MAX_REMEMBERED = 10_000;

/**
 * Stamps a site's `lastSeenAt` with `ms` (milliseconds since the epoch), at most once a minute per
 * site: this process skips a site it stamped less than a minute ago, and the write itself skips a
 * row stamped less than a minute before (by another instance). Not an edit: `updatedAt` stays.
 * Asked on every request of the site's script: the skip makes no date text.
 */
export async function touchSiteSeen(db: Kysely<Database>, siteId: string, ms: number): Promise<void> {
  const memory = stamped(db);
  const last = memory.get(siteId);
  if (last !== undefined && ms - last < SEEN_EVERY_MS && ms >= last) return;
  if (memory.size >= MAX_REMEMBERED) memory.clear();
  memory.set(siteId, ms);
  const threshold = new Date(ms - SEEN_EVERY_MS).toISOString();
  await db
    .updateTable('sites')
    .set({ last_seen_at: new Date(ms).toISOString() })
    .where('id', '=', siteId)
    .where((eb) => eb.or([eb('last_seen_at', 'is', null), eb('last_seen_at', '<=', threshold)]))
    .execute();
}
