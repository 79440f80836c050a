import type { FastifyBaseLogger } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { roundLoop, type RoundLoop } from '../jobs/index.js';
import { now } from '../time.js';
import { BANDIT_INTERVAL_MS, thompsonWeights } from './bandit.js';
import { armsOf, startPeriod } from './repository.js';
import { lookForFirstWinners } from './looks.js';
import { countsByPeriod } from './results.js';

/** Bandits looked at per round. */
const BATCH = 20;

/**
 * A bandit's weights are recomputed by Thompson sampling over its conversions, at most every 15
 * minutes, never below 1% per arm; each recomputation is a new period, visible in the results.
 * Every instance runs this; a recomputation is claimed by moving `next_reweigh_at` on with a
 * conditional UPDATE from the value read, in the same transaction as the new weights, so two
 * instances never recompute one experiment twice, and a crash leaves it due for the next round.
 * The same rounds look at running experiments for their first winner (looks.ts), every `pollMs`.
 */
export function createReweighing(db: Kysely<Database>, log: FastifyBaseLogger, pollMs = 60_000): RoundLoop {
  async function round(): Promise<void> {
    const due = await db
      .selectFrom('experiments')
      .select(['id', 'next_reweigh_at'])
      .where(sql<boolean>`next_reweigh_at is not null`)
      .where('next_reweigh_at', '<=', now())
      .orderBy('next_reweigh_at')
      .limit(BATCH)
      .execute();
    await reweigh(due);
    await lookForFirstWinners(db, pollMs);
  }
  async function reweigh(due: { id: string; next_reweigh_at: string | null }[]): Promise<void> {
    for (const { id, next_reweigh_at: was } of due) {
      await db.transaction().execute(async (trx) => {
        const next = new Date(Date.now() + BANDIT_INTERVAL_MS).toISOString();
        const claimed = await trx
          .updateTable('experiments')
          .set({ next_reweigh_at: next })
          .where('id', '=', id)
          .where('next_reweigh_at', '=', was)
          .where(sql<boolean>`status = 'running'`)
          .executeTakeFirst();
        if (claimed.numUpdatedRows === 0n) return;
        const row = await trx.selectFrom('experiments').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
        const totals = new Map<string, { units: number; conversions: number }>();
        for (const period of (await countsByPeriod(trx, id)).values())
          for (const [key, c] of Object.entries(period)) {
            const t = totals.get(key) ?? { units: 0, conversions: 0 };
            totals.set(key, { units: t.units + c.units, conversions: t.conversions + c.conversions });
          }
        const arms = armsOf(row);
        const weights = thompsonWeights(
          arms.map((a) => ({ key: a.key, units: totals.get(a.key)?.units ?? 0, conversions: totals.get(a.key)?.conversions ?? 0 })),
          // A new seed every recomputation, fixed by the experiment and the time: the same on replay.
          { seed: (Date.parse(next) % 0xffff_fffe) + 1 },
        );
        const nextArms = arms.map((a) => ({ ...a, weight: weights[a.key] ?? a.weight }));
        await trx
          .updateTable('experiments')
          .set({ arms: JSON.stringify(nextArms), updated_at: now() })
          .where('id', '=', id)
          .execute();
        await startPeriod(trx, id, nextArms, 'bandit');
      });
    }
  }
  return roundLoop({ round, pollMs, minGapMs: Math.min(pollMs, 1000), onError: (err) => log.error({ err }, 'bandit reweighing failed') });
}
