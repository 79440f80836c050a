import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { noteSiteChange } from '../db/changes.js';
import { claimLeases, releaseLease } from '../db/lease.js';
import type { Database } from '../db/types.js';
import { roundLoop, type RoundLoop } from '../jobs/index.js';
import { variantKey } from './files.js';
import { makeRenditions } from './renditions.js';
import type { FileStores } from './store.js';

/** Files made per claim: each is decoded up to eleven times, so a round stays short. */
const BATCH = 4;
/** Longer than the slowest file takes (a 10 MiB image, eleven encodes, on a busy machine). */
const LEASE_MS = 5 * 60 * 1000;
const POLL_MS = 60 * 1000;

export interface BackfillTuning {
  pollMs?: number;
  /** How long a claim holds its files: a holder killed mid-way leaves them to be claimed again after it. */
  leaseMs?: number;
}

/**
 * One round: files uploaded before issue 46 (their `renditions` null) get every width, a few at a
 * time, claimed by a conditional UPDATE (db/lease.ts) so that instances share the work and a
 * process killed mid-file leaves a lease that ends, not a file forgotten. The bytes are written
 * before the row says they exist; a page that shows the file is rendered anew once it does.
 * Returns how many files were made.
 */
export async function backfillRound(db: Kysely<Database>, stores: FileStores, leaseMs = LEASE_MS): Promise<number> {
  const at = Date.now();
  const until = new Date(at + leaseMs).toISOString();
  const claimed = await claimLeases(db, {
    table: 'files',
    lease: 'renditions_lease_until',
    due: (eb) => eb.and([eb('renditions', 'is', null), eb('deleted_at', 'is', null)]),
    orderBy: 'id',
    limit: BATCH,
    now: new Date(at).toISOString(),
    until,
    returning: ['id', 'tenant_id', 'store', 'content_type', 'width'],
  });
  let made = 0;
  for (const file of claimed) {
    const store = stores.byName[file.store];
    const bytes = await store.get(file.id);
    // Bytes gone (a file store restored without them): nothing to make, and nothing to try again.
    const renditions = bytes ? await makeRenditions(bytes, file.content_type, Number(file.width)) : undefined;
    for (const [name, data] of renditions?.files ?? []) await store.put(variantKey(file.id, name), data);
    const kept = await db.transaction().execute(async (trx) => {
      const released = await releaseLease(
        trx,
        { table: 'files', lease: 'renditions_lease_until', id: file.id, until },
        { renditions: JSON.stringify(renditions?.made ?? { widths: [], webp: false }) },
      );
      // The tenant's documents list the new widths from now on.
      if (released) await noteSiteChange(trx, file.tenant_id);
      return released;
    });
    if (kept) made++;
  }
  return made;
}

/**
 * The backfill as a background job: a round soon after start (never before it: start-up does not
 * wait for images), then batch after batch while files are due, else one a minute, in every process.
 */
export function createRenditionsBackfill(
  db: Kysely<Database>,
  stores: FileStores,
  log: FastifyBaseLogger,
  tuning: BackfillTuning = {},
): RoundLoop {
  const loop: RoundLoop = roundLoop({
    round: async () => {
      const made = await backfillRound(db, stores, tuning.leaseMs);
      if (made > 0) {
        log.info({ files: made }, 'image widths made for earlier files');
        // More may be waiting: the next batch right away, not a poll later.
        loop.wake();
      }
    },
    pollMs: tuning.pollMs ?? POLL_MS,
    minGapMs: 0,
    unref: true,
    onError: (err) => log.error({ err }, 'image widths backfill round failed'),
  });
  return loop;
}
