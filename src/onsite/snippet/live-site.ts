import type { Kysely } from 'kysely';
import { CACHES, countedCache, databaseCache } from '../../db/caches.js';
import type { Freshness } from '../../db/changes.js';
import type { Database } from '../../db/types.js';
import { type LiveExperience, liveExperiencesOfSite } from '../experiences-repository.js';
import { type SiteRecord, siteByKey } from '../sites-repository.js';
import { type CompiledExperience, compiled } from './decide.js';

/** A site as its script's requests read it: the site, and its live experiences, compiled, in the order they apply. */
export interface LiveSite {
  site: SiteRecord;
  experiences: CompiledExperience<LiveExperience>[];
}

/** A site key's tenant: a site never moves to another tenant, and a key names one site only. */
const tenants = databaseCache(CACHES.siteKeyTenants);

/**
 * Kept under the tenant's change sequence, which every write of a site or an experience moves
 * (migration 0064's triggers): `lastSeenAt` is not one, so the site's kept stamp is not read here.
 */
const kept = countedCache(CACHES.liveSites, async ({ db, siteKey }: { db: Kysely<Database>; siteKey: string }) => {
  const site = await siteByKey(db, siteKey);
  if (!site) return { live: undefined, bytes: 0 };
  const experiences = await liveExperiencesOfSite(db, site.siteId);
  // Its compiled patterns and sets count as much again as the text they come from.
  return { live: { site, experiences: experiences.map(compiled) }, bytes: 4 * JSON.stringify(experiences).length };
});

/**
 * The site of `siteKey` with its live experiences (undefined: no such site), read once per change
 * of its tenant: the script's every request (issue 48's decide) needs both, and a busy site asks
 * thousands of times a second between two edits. The tenant's counter is read once per committed
 * state on SQLite (`dataVersion` given), once per change the feed hears of on PostgreSQL (`feed`
 * given: every write of a site or an experience notifies it), else once per request.
 */
export async function liveSite(db: Kysely<Database>, siteKey: string, freshness: Freshness = {}): Promise<LiveSite | undefined> {
  let tenantId = tenants(db).get(siteKey);
  if (tenantId === undefined) {
    // An unknown key is not kept: a visitor sending made-up keys fills nothing.
    const site = await siteByKey(db, siteKey);
    if (!site) return undefined;
    tenantId = site.tenantId;
    tenants(db).set(siteKey, tenantId);
  }
  return (await kept(db, tenantId, siteKey, { db, siteKey }, freshness)).live;
}
