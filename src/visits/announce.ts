import { accountOfPerson } from '../accounts/index.js';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/types.js';
import { emit } from '../events/index.js';
import { GOAL_REACHED } from '../goals/index.js';
import { roundLoop, type RoundLoop } from '../jobs/index.js';
import { now } from '../time.js';
import { toSession } from './repository.js';
import { type AudienceSession, SessionEnded, type VisitStarted } from './schemas.js';

/**
 * `visit.started`, for the first report of a visit on a person's audience: claimed by a
 * conditional UPDATE in the report's transaction, so of two instances taking first reports of one
 * visit, one announces it, and a report that fails announces nothing.
 */
export async function announceStart(
  trx: Transaction<Database>,
  tenantId: string,
  session: AudienceSession,
  personId: string,
  path: string,
): Promise<void> {
  const claimed = await trx
    .updateTable('audience_sessions')
    .set({ start_announced: 1 })
    .where('id', '=', session.audienceSessionId)
    .where('start_announced', '=', 0)
    .executeTakeFirst();
  if (Number(claimed.numUpdatedRows) === 0) return;
  const data: VisitStarted = {
    audienceSessionId: session.audienceSessionId,
    analyticsSessionId: session.analyticsSessionId,
    personId,
    accountId: await accountOfPerson(trx, tenantId, personId),
    pageId: session.pageId,
    audienceId: session.audienceId,
    path,
    channel: session.channel,
    sessionStartedAt: session.sessionStartedAt,
  };
  await emit(trx, tenantId, 'visit.started', data);
}

/** What `session.ended` tells beyond the session as the API shows it. */
type EndedExtra = Pick<SessionEnded, 'personId' | 'accountId' | 'conversions' | 'goalsReached'>;

/**
 * `session.ended`'s payload, in its schema's order: the session's own fields as the API maps them
 * (toSession, the one mapping of a row), beside what the visit's end adds.
 */
function sessionEnded(session: AudienceSession, extra: EndedExtra): SessionEnded {
  // Checked at compile time: every own field of the event is the API session's, of the same type.
  const own: Omit<SessionEnded, keyof EndedExtra> = session;
  const fields: Record<string, unknown> = { ...own, ...extra };
  return Object.fromEntries(Object.keys(SessionEnded.properties).map((k) => [k, fields[k]])) as SessionEnded;
}

/** Visits whose end is looked at per round. */
const BATCH = 100;

/**
 * The tenant's goals this visit reached, oldest goal first, by the analytics' own match of a goal
 * to a visit's recorded occurrences (goals/sql.ts).
 */
async function goalsReached(db: Kysely<Database>, tenantId: string, sessionId: string) {
  return db
    .selectFrom('goals as g')
    .innerJoin('visit_events as e', (join) => join.on(GOAL_REACHED))
    .select(['g.id as goalId', 'g.name'])
    .where('g.tenant_id', '=', tenantId)
    .where('e.session_id', '=', sessionId)
    .orderBy('g.created_at')
    .orderBy('g.id')
    .execute();
}

/**
 * Announces `session.ended` for each collected visit whose end fell due (`end_due_at`, set by its
 * reports; with `end_due_follows`, the idle time after its last report). Each visit is claimed by
 * a conditional UPDATE that clears `end_due_at` and sets `end_announced`, in the transaction that
 * emits the event: two instances never announce one visit twice, and a crash before the commit
 * leaves it due for the next round.
 */
export async function announceEnds(db: Kysely<Database>, idleSeconds: number, at = now()): Promise<number> {
  const due = await db
    .selectFrom('audience_sessions')
    .select(['id', 'end_due_follows', 'session_ended_at'])
    .where('end_due_at', 'is not', null)
    .where('end_due_at', '<=', at)
    .orderBy('end_due_at')
    .limit(BATCH)
    .execute();
  let announced = 0;
  for (const { id, end_due_follows: follows, session_ended_at: lastReport } of due) {
    // `end_due_at` was a lower bound (migration 0029): the end falls due the idle time after the
    // last report. Not yet: it is looked at again then. A report since moved the last report, and
    // this visit is left for the next round.
    const dueAt = follows === 1 ? new Date(Date.parse(lastReport) + idleSeconds * 1000).toISOString() : at;
    if (dueAt > at) {
      await db
        .updateTable('audience_sessions')
        .set({ end_due_at: dueAt, end_due_follows: 0 })
        .where('id', '=', id)
        .where('end_announced', '=', 0)
        .where('end_due_follows', '=', 1)
        .where('session_ended_at', '=', lastReport)
        .execute();
      continue;
    }
    await db.transaction().execute(async (trx) => {
      let claim = trx
        .updateTable('audience_sessions')
        .set({ end_due_at: null, end_due_follows: 0, end_announced: 1 })
        .where('id', '=', id)
        .where('end_announced', '=', 0)
        .where('end_due_at', '<=', at);
      if (follows === 1) claim = claim.where('end_due_follows', '=', 1).where('session_ended_at', '=', lastReport);
      const row = await claim.returningAll().executeTakeFirst();
      if (!row) return;
      const audience = await trx.selectFrom('audiences').select('person_id').where('id', '=', row.audience_id).executeTakeFirst();
      const personId = audience?.person_id ?? null;
      const data = sessionEnded(toSession(row), {
        personId,
        accountId: personId === null ? null : await accountOfPerson(trx, row.tenant_id, personId),
        conversions: Number(row.has_conversion),
        goalsReached: await goalsReached(trx, row.tenant_id, row.id),
      });
      await emit(trx, row.tenant_id, 'session.ended', data);
      announced++;
    });
  }
  return announced;
}

/** The background sweep of `announceEnds`, every `pollMs` (15 s by default; tests shorten it). */
export function createSessionEnds(db: Kysely<Database>, log: FastifyBaseLogger, idleSeconds: number, pollMs = 15_000): RoundLoop {
  return roundLoop({
    round: async () => {
      // A full batch means more are due: go on at once.
      let announced: number;
      do announced = await announceEnds(db, idleSeconds);
      while (announced >= BATCH);
    },
    pollMs,
    minGapMs: Math.min(pollMs, 1000),
    onError: (err) => log.error({ err }, 'session ends failed'),
  });
}
