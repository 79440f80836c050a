import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { now } from '../time.js';
import { periodsOf } from './repository.js';
import { analyseExperiment } from './results.js';

/** Running experiments looked at per round. */
const BATCH = 20;

/**
 * Looks at each running experiment about once a round: keeps each arm's smallest p-value so far
 * (the always-valid p-value is that running minimum, Johari et al.), and records the first winner,
 * its time and its arm, once a look says `winner`; the results then say `winner` whatever later
 * looks show (issue 45). Reading the results writes nothing (issue 36); these looks do.
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
    const analysis = await analyseExperiment(db, row, await periodsOf(db, id));
    const at = now();
    await db.transaction().execute(async (trx) => {
      for (const [arm, { pValue, difference }] of Object.entries(analysis.looked)) {
        await trx
          .insertInto('experiment_look_minima')
          .values({ experiment_id: id, arm, p_value: pValue, difference, looked_at: at })
          .onConflict((oc) =>
            oc
              .columns(['experiment_id', 'arm'])
              .doUpdateSet({ p_value: pValue, difference, looked_at: at })
              .where('experiment_look_minima.p_value', '>', pValue),
          )
          .execute();
      }
      if (analysis.decision !== 'winner') return;
      await trx
        .updateTable('experiments')
        .set({ first_winner_at: at, first_winner: analysis.winner })
        .where('id', '=', id)
        .where('first_winner_at', 'is', null)
        .where(sql<boolean>`status = 'running'`)
        .execute();
      await trx.deleteFrom('experiment_looks').where('experiment_id', '=', id).execute();
    });
  }
}
