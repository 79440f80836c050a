import type { FastifyBaseLogger } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { roundLoop, type RoundLoop } from '../jobs/index.js';
import { now } from '../time.js';
import type { TxtLookup } from './dns.js';
import { type DomainWiring, verificationName } from './repository.js';
import { markVerified } from './verification.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/**
 * When a pending domain is looked at again after a check at `at`: every 10 minutes in its first
 * day, then hourly for a week; after that, never (null): its tenant asks, or an operator attests.
 */
export function nextCheckAt(createdAt: string, at: number): string | null {
  const age = at - Date.parse(createdAt);
  if (age < DAY_MS) return new Date(at + 10 * MINUTE_MS).toISOString();
  if (age < 8 * DAY_MS) return new Date(at + HOUR_MS).toISOString();
  return null;
}

/** Domains looked at per round: a round is short, and the next one comes soon. */
const BATCH = 20;

/**
 * Looks at pending domains whose check is due, in every process. A check is claimed by moving its
 * `next_check_at` on with a conditional UPDATE (from the value read to the next one), so two
 * instances never check one domain at once, and a process killed during a look-up only delays it
 * to its next turn. A found record verifies the domain as the tenant's own request would.
 */
export function createDomainChecks(
  db: Kysely<Database>,
  wiring: DomainWiring,
  lookup: TxtLookup,
  log: FastifyBaseLogger,
  pollMs = MINUTE_MS,
): RoundLoop {
  async function round(): Promise<void> {
    const due = await db
      .selectFrom('tenant_domains')
      .select(['id', 'hostname', 'created_at', 'next_check_at', 'verification_value'])
      // Literal, so SQLite can use the partial index on next_check_at.
      .where(sql<boolean>`next_check_at is not null`)
      .where('next_check_at', '<=', now())
      .orderBy('next_check_at')
      .limit(BATCH)
      .execute();
    for (const domain of due) {
      const claimed = await db
        .updateTable('tenant_domains')
        .set({ next_check_at: nextCheckAt(domain.created_at, Date.now()) })
        .where('id', '=', domain.id)
        .where('status', '=', 'pending')
        .where('next_check_at', '=', domain.next_check_at)
        .executeTakeFirst();
      if (claimed.numUpdatedRows === 0n || domain.verification_value === null) continue;
      const check = await lookup(verificationName(domain.hostname), domain.verification_value);
      if (!check.found) continue;
      try {
        await db.transaction().execute(async (trx) => {
          const row = await trx.selectFrom('tenant_domains').selectAll().where('id', '=', domain.id).executeTakeFirst();
          if (row?.status === 'pending') await markVerified(trx, wiring, row);
        });
        log.info({ tenantDomainId: domain.id }, 'domain verified by the background check');
      } catch (err) {
        // Another tenant verified the name first (this claim is released), or the row is gone.
        log.warn({ err, tenantDomainId: domain.id }, 'a found record could not verify the domain');
      }
    }
  }
  return roundLoop({ round, pollMs, minGapMs: Math.min(pollMs, 1000), onError: (err) => log.error({ err }, 'domain checks failed') });
}
