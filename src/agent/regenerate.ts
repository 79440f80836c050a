import type { Kysely } from 'kysely';
import type { AudiencesTable, Database, PagesTable } from '../db/types.js';
import { invalidField } from '../http/errors.js';
import { forgetRegenerations, liveAudiencesAfter, liveAudiencesAmong, queueNewVersions, writtenAmong } from '../audiences/index.js';
import { takingTurns } from './pacing.js';
import type { RegenerateBody, Regenerated } from './schemas.js';

/**
 * Audiences queued per transaction, with a turn for other requests between them (pacing.ts): on
 * SQLite a transaction holds the event loop, and requests wait for the whole of it.
 */
const REGENERATE_BATCH = 100;
const KEY_TTL_MS = 24 * 60 * 60 * 1000;

type Plan = Pick<Regenerated, 'queued' | 'skipped'>;

/**
 * Queues a new version of each live audience of the page (or of the listed ones, which must all be
 * live audiences of the page: checked before anything is written), batch by batch, each batch its
 * own transaction. Page-wide, an audience whose published or latest draft version a person wrote
 * is skipped unless `includeWritten`: a regenerate never replaces a person's words unasked. Named
 * audiences are regenerated exactly, written or not (the caller chose them). `key` (the request's
 * work key, when it has an Idempotency-Key) makes a retry skip the audiences already queued by an
 * earlier attempt. `dryRun` reads the same and writes nothing. Returns how many this call queued
 * (or would), and what it skipped.
 */
export async function regenerate(
  db: Kysely<Database>,
  page: PagesTable,
  body: NonNullable<RegenerateBody> | null,
  key: string | null,
): Promise<Plan> {
  const dryRun = body?.dryRun === true;
  if (key !== null && !dryRun) await forgetRegenerations(db, key, new Date(Date.now() - KEY_TTL_MS).toISOString());
  const audienceIds = body?.audienceIds;
  if (audienceIds !== undefined) {
    for (let i = 0; i < audienceIds.length; i += REGENERATE_BATCH) {
      const chunk = audienceIds.slice(i, i + REGENERATE_BATCH);
      const live = new Set((await liveAudiencesAmong(db, page, chunk)).map((a) => a.id));
      const missing = chunk.findIndex((id) => !live.has(id));
      if (missing !== -1) throw invalidField(`/audienceIds/${i + missing}`, 'is not a live audience of this page');
    }
    if (dryRun) return { queued: audienceIds.length, skipped: [] };
    let queued = 0;
    for (let i = 0; i < audienceIds.length; i += REGENERATE_BATCH) {
      const chunk = audienceIds.slice(i, i + REGENERATE_BATCH);
      queued += await takingTurns(() =>
        db.transaction().execute(async (trx) => queueNewVersions(trx, await liveAudiencesAmong(trx, page, chunk), key)),
      );
    }
    return { queued, skipped: [] };
  }
  const includeWritten = body?.includeWritten === true;
  const plan: Plan = { queued: 0, skipped: [] };
  /** One batch of the page's live audiences after `afterId`: its written ones skipped, the rest queued. */
  const batch = async (afterId: string | null, trx: Kysely<Database>, queue: (todo: AudiencesTable[]) => Promise<number>) => {
    const audiences = await liveAudiencesAfter(trx, page, afterId, REGENERATE_BATCH);
    const written = includeWritten ? new Set<string>() : await writtenAmong(trx, audiences, key);
    for (const a of audiences) if (written.has(a.id)) plan.skipped.push({ audienceId: a.id, reason: 'written' });
    plan.queued += await queue(audiences.filter((a) => !written.has(a.id)));
    return audiences.at(-1)?.id ?? null;
  };
  let afterId: string | null = null;
  do {
    const from: string | null = afterId;
    afterId = dryRun
      ? await batch(from, db, async (todo) => todo.length)
      : await takingTurns(() => db.transaction().execute((trx) => batch(from, trx, (todo) => queueNewVersions(trx, todo, key))));
  } while (afterId !== null);
  return plan;
}
