import type { FastifyBaseLogger } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/types.js';
import { emit } from '../events/outbox.js';
import { GOAL_REACHED } from '../goals/sql.js';
import { roundLoop, type RoundLoop } from '../jobs/loop.js';
import { now } from '../time.js';
import type { AudienceSession, SessionEnded, VisitStarted } from './schemas.js';

/** The account a person belongs to: the tenant's account of the person's domain. */
async function accountOf(db: Kysely<Database>, tenantId: string, personId: string): Promise<string | null> {
  const row = await db
    .selectFrom('persons')
    .innerJoin('accounts', (join) =>
      join.onRef('accounts.domain_lc', '=', 'persons.domain_lc').onRef('accounts.tenant_id', '=', 'persons.tenant_id'),
    )
    .select('accounts.id')
    .where('persons.id', '=', personId)
    .where('persons.tenant_id', '=', tenantId)
    .orderBy('accounts.id')
    .executeTakeFirst();
  return row?.id ?? null;
}

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
    accountId: await accountOf(trx, tenantId, personId),
    pageId: session.pageId,
    audienceId: session.audienceId,
    path,
    channel: session.channel,
    sessionStartedAt: session.sessionStartedAt,
  };
  await emit(trx, tenantId, 'visit.started', data);
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
      const data: SessionEnded = {
        audienceSessionId: row.id,
        analyticsSessionId: row.analytics_session_id,
        personId,
        accountId: personId === null ? null : await accountOf(trx, row.tenant_id, personId),
        pageId: row.page_id,
        audienceId: row.audience_id,
        pageUrl: row.page_url,
        channel: row.channel as SessionEnded['channel'],
        country: row.country,
        sessionStartedAt: row.session_started_at,
        sessionEndedAt: row.session_ended_at,
        timeSpentSeconds: Number(row.time_spent_seconds),
        maxScrollDepthPercentage: Number(row.max_scroll_depth_percentage),
        totalClicksCount: Number(row.total_clicks_count),
        questionsAskedCount: Number(row.questions_asked_count),
        conversions: Number(row.has_conversion),
        goalsReached: await goalsReached(trx, row.tenant_id, row.id),
      };
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
