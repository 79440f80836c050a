import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from './types.js';

/**
 * A secret per UTC day, the same on every instance, for keys that must be stable for a day and
 * then unlinkable (Plausible's daily salt): a visitor's experiment key today cannot be tied to
 * theirs tomorrow once yesterday's secret is deleted (`forgetPastSecrets`, by maintenance).
 */
export interface DailySecrets {
  /** Today's secret (UTC), made by whichever instance asks first. */
  today(): Promise<Buffer>;
}

export const dayOf = (at: number) => new Date(at).toISOString().slice(0, 10);

export function dailySecrets(db: Kysely<Database>, clock: () => number = Date.now): DailySecrets {
  // Cache: one entry, today's; invalidated by the clock leaving its day. Asked on every report, so
  // the day's bounds are kept as numbers rather than its date formatted on every call.
  let kept: { from: number; until: number; secret: Buffer } | undefined;
  return {
    async today() {
      const at = clock();
      if (kept && at >= kept.from && at < kept.until) return kept.secret;
      const day = dayOf(at);
      await db
        .insertInto('daily_secrets')
        .values({ day, secret: randomBytes(32).toString('base64') })
        .onConflict((oc) => oc.column('day').doNothing())
        .execute();
      const row = await db.selectFrom('daily_secrets').select('secret').where('day', '=', day).executeTakeFirstOrThrow();
      const from = Date.parse(`${day}T00:00:00.000Z`);
      kept = { from, until: from + 86_400_000, secret: Buffer.from(row.secret, 'base64') };
      return kept.secret;
    },
  };
}

/** Deletes every secret of a day before today: what it keyed can no longer be linked to anything. */
export async function forgetPastSecrets(db: Kysely<Database>, at = Date.now()): Promise<void> {
  await db.deleteFrom('daily_secrets').where('day', '<', dayOf(at)).execute();
}
