import type { Transaction } from 'kysely';
import type { AudiencesTable, Database, PagesTable } from '../db/types.js';
import { emit } from '../events/index.js';
import { conflict } from '../http/errors.js';
import { after, now } from '../time.js';
import { audienceConflict, checkRouteKeyFree, checkSegmentRoom } from './claims.js';
import { toAudienceWithVersions } from './repository.js';
import type { Audience } from './schemas.js';

/** Archiving frees the route key and the home page flag for the page's other audiences; the values stay on it. */
export async function archiveAudience(trx: Transaction<Database>, page: PagesTable, current: AudiencesTable): Promise<Audience> {
  if (current.archived_at !== null) return toAudienceWithVersions(trx, current, page);
  const at = now();
  const row = await trx
    .updateTable('audiences')
    .set({ archived_at: at, updated_at: after(current.updated_at) })
    .where('id', '=', current.id)
    .where('archived_at', 'is', null)
    .returningAll()
    .executeTakeFirstOrThrow();
  const audience = await toAudienceWithVersions(trx, row, page);
  await emit(trx, page.tenant_id, 'audience.archived', audience);
  return audience;
}

/**
 * Back to live, with its route key if no live audience took it meanwhile (409 otherwise). Its
 * home page flag comes back only if no other live audience holds the page's home page now: a
 * restore never takes it from another audience silently. An audience archived by the erasure of
 * its person stays archived (409): it holds nothing to show any more.
 */
export async function restoreAudience(trx: Transaction<Database>, page: PagesTable, current: AudiencesTable): Promise<Audience> {
  if (current.archived_at === null) return toAudienceWithVersions(trx, current, page);
  if (current.erased_at !== null) throw conflict('the audience was archived by the erasure of its person; it cannot be restored');
  if (current.person_route_key !== null) await checkRouteKeyFree(trx, page, current.person_route_key, current.id);
  if (current.rules !== null) await checkSegmentRoom(trx, page, current.id, '/rules');
  const changes: Partial<AudiencesTable> = { archived_at: null, updated_at: after(current.updated_at) };
  if (current.home_page === 1) {
    const holder = await trx
      .selectFrom('audiences')
      .select('id')
      .where('page_id', '=', page.id)
      .where('home_page', '=', 1)
      .where('archived_at', 'is', null)
      .executeTakeFirst();
    if (holder) {
      const flags = (JSON.parse(current.flags) as string[]).filter((f) => f !== 'home_page');
      changes.flags = JSON.stringify(flags);
      changes.home_page = 0;
    }
  }
  let row: AudiencesTable;
  try {
    row = await trx.updateTable('audiences').set(changes).where('id', '=', current.id).returningAll().executeTakeFirstOrThrow();
  } catch (err) {
    throw audienceConflict(err, current.person_route_key) ?? err;
  }
  const audience = await toAudienceWithVersions(trx, row, page);
  await emit(trx, page.tenant_id, 'audience.restored', audience);
  return audience;
}
