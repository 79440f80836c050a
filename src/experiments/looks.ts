import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { now } from '../time.js';
import { experimentResults } from './results.js';

/** Running experiments looked at per round. */
const BATCH = 20;

/**
 * Records each running experiment's first winner: the time a look at its results first said
 * `winner` (the anytime guarantee covers acting on it, even if a later look says `collecting`).
 * Reading the results writes nothing (issue 36); this scheduled look does, once per experiment.
 * A look is claimed by moving `experiment_looks.next_look_at` on with a conditional UPDATE from
 * the value read, so two instances never look at one experiment at once, and a crash leaves it due
 * for the next round. The lease lives in its own table: every update of `experiments` moves the
 * tenant's change sequence (and drops its served-page memo), which a look each minute must not do.
 */
export async function lookForFirstWinners(db: Kysely<Database>, everyMs: number): Promise<void> {
  const due = await db
    .selectFrom('experiment_looks')
    .select(['experiment_id', 'next_look_at'])
    .where('next_look_at', '<=', now())
    .orderBy('next_look_at')
    .limit(BATCH)
    .execute();
  for (const { experiment_id: id, next_look_at: was } of due) {
    const claimed = await db
      .updateTable('experiment_looks')
      .set({ next_look_at: new Date(Date.now() + everyMs).toISOString() })
      .where('experiment_id', '=', id)
      .where('next_look_at', '=', was)
      .executeTakeFirst();
    if (claimed.numUpdatedRows === 0n) continue;
    const row = await db.selectFrom('experiments').selectAll().where('id', '=', id).executeTakeFirst();
    if (row?.status !== 'running' || row.first_winner_at !== null) {
      await db.deleteFrom('experiment_looks').where('experiment_id', '=', id).execute();
      continue;
    }
    const { decision } = await experimentResults(db, row);
    if (decision !== 'winner') continue;
    await db.transaction().execute(async (trx) => {
      await trx
        .updateTable('experiments')
        .set({ first_winner_at: now() })
        .where('id', '=', id)
        .where('first_winner_at', 'is', null)
        .where(sql<boolean>`status = 'running'`)
        .execute();
      await trx.deleteFrom('experiment_looks').where('experiment_id', '=', id).execute();
    });
  }
}
