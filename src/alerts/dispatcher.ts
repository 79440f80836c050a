import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { WebhookDelivery } from '../config.js';
import type { AlertMessagesTable, Database } from '../db/types.js';
import { attemptOutcome, claimDueAttempts, consume, givenUp, heldAttempt, releaseAttempt, type Resolve, send } from '../events/index.js';
import { roundLoop, type RoundLoop } from '../jobs/index.js';
import { now } from '../time.js';
import { alertOnEvents, type Facts } from './fan-out.js';
import { slackMessage } from './message.js';
import { webhookUrlOf } from './repository.js';
import { failureOf } from './failure.js';
import type { Sealer } from '../integrations/index.js';

const POLL_MS = 1000;
const BATCH = 20;
/** Events read per round; most are no alert's, and are passed by. */
const EVENTS_BATCH = 100;

/**
 * The alerts' loop, in every process (it depends on no other loop): as the outbox's `alerts`
 * consumer (events/consumers.ts) it turns new events into messages (fan-out.ts), then it sends due
 * alert messages to Slack, at least once, as the webhook dispatcher sends deliveries:
 * claimed with a lease (so one instance sends each), retried on the webhook schedule (Retry-After
 * honoured on 429), given up when the schedule runs out. Slack answers 200 "ok"; 404/410 mean the
 * webhook was removed, which ends the message (the alert stays, with the error to read).
 */
export function createAlertSender(
  db: Kysely<Database>,
  options: WebhookDelivery,
  consoleUrl: string,
  log: FastifyBaseLogger,
  resolve: Resolve,
  sealer: Sealer,
): RoundLoop {
  const leaseMs = options.timeoutMs + 5000;

  async function deliver(message: AlertMessagesTable): Promise<void> {
    const held = heldAttempt('alert_messages', message);
    if (held === undefined) return;
    const alert = await db.selectFrom('alerts').selectAll().where('id', '=', message.alert_id).executeTakeFirst();
    if (alert?.active !== 1) {
      await releaseAttempt(db, held, givenUp('the alert is not active'));
      return;
    }
    const url = webhookUrlOf(alert, sealer);
    if (url === undefined) {
      const lastError = 'the webhook URL cannot be read (INTEGRATIONS_SECRET changed?): send it again with PATCH';
      await releaseAttempt(db, held, givenUp(lastError));
      return;
    }
    const facts = JSON.parse(message.facts) as Facts & { test?: boolean };
    const body = await slackMessage(db, message.tenant_id, alert.name, facts, message.more, consoleUrl);
    const sent = await send(
      url,
      body,
      { 'content-type': 'application/json', 'user-agent': 'page-audience-api-alerts/1' },
      { timeoutMs: options.timeoutMs, allowPrivate: options.allowPrivate, resolve },
    );
    // What failed, in words that hold no DNS answer (no address the name resolved to).
    const result = { ...sent, ...(sent.error === undefined ? {} : { error: failureOf(url, sent) }) };
    const gone = result.status === 404 || result.status === 410;
    const { outcome, changes } = attemptOutcome({ attempts: message.attempts, schedule: gone ? [] : options.retryScheduleMs, result });
    await releaseAttempt(db, held, changes);
    if (outcome.retryInMs !== null && outcome.retryInMs < POLL_MS) setTimeout(rounds.wake, outcome.retryInMs).unref();
  }

  async function round(): Promise<void> {
    await consume(db, 'alerts', alertOnEvents, EVENTS_BATCH);
    const at = now();
    const due = await claimDueAttempts(db, {
      table: 'alert_messages',
      limit: BATCH,
      now: at,
      until: new Date(Date.now() + leaseMs).toISOString(),
    });
    await Promise.all(
      due.map((m) => deliver(m).catch((err: unknown) => log.error({ err, messageId: m.id }, 'alert message failed to record'))),
    );
  }

  const rounds = roundLoop({ round, pollMs: POLL_MS, minGapMs: 20, onError: (err) => log.error({ err }, 'alert round failed') });
  return rounds;
}
