import type { Kysely } from 'kysely';
import type { Database, PagesTable } from '../db/types.js';
import { invalidField } from '../http/errors.js';
import { forgetRegenerations, liveAudiencesAfter, liveAudiencesAmong, queueNewVersions } from './queue.js';

/** Audiences queued per transaction: the writer is never held by a whole page's worth. */
export const REGENERATE_BATCH = 500;
const KEY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Queues a new version of each live audience of the page (or of the listed ones, which must all be
 * live audiences of the page: checked before anything is written), batch by batch, each batch its
 * own transaction. `key` (the request's work key, when it has an Idempotency-Key) makes a retry
 * skip the audiences already queued by an earlier attempt. Returns how many this call queued.
 */
export async function regenerate(
  db: Kysely<Database>,
  page: PagesTable,
  audienceIds: readonly string[] | undefined,
  key: string | null,
): Promise<number> {
  if (key !== null) await forgetRegenerations(db, key, new Date(Date.now() - KEY_TTL_MS).toISOString());
  let queued = 0;
  if (audienceIds !== undefined) {
    for (let i = 0; i < audienceIds.length; i += REGENERATE_BATCH) {
      const chunk = audienceIds.slice(i, i + REGENERATE_BATCH);
      const live = new Set((await liveAudiencesAmong(db, page, chunk)).map((a) => a.id));
      const missing = chunk.findIndex((id) => !live.has(id));
      if (missing !== -1) throw invalidField(`/audienceIds/${i + missing}`, 'is not a live audience of this page');
    }
    for (let i = 0; i < audienceIds.length; i += REGENERATE_BATCH) {
      const chunk = audienceIds.slice(i, i + REGENERATE_BATCH);
      queued += await db.transaction().execute(async (trx) => queueNewVersions(trx, await liveAudiencesAmong(trx, page, chunk), key));
    }
    return queued;
  }
  let afterId: string | null = null;
  for (;;) {
    const { count, last } = await db.transaction().execute(async (trx) => {
      const audiences = await liveAudiencesAfter(trx, page, afterId, REGENERATE_BATCH);
      return { count: await queueNewVersions(trx, audiences, key), last: audiences[audiences.length - 1] };
    });
    queued += count;
    if (!last) return queued;
    afterId = last.id;
  }
}
