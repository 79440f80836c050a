import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { WebhookDelivery } from '../config.js';
import { claimLeases, releaseLease } from '../db/lease.js';
import type { AlertMessagesTable, Database } from '../db/types.js';
import { roundLoop, type RoundLoop } from '../jobs/loop.js';
import { now } from '../time.js';
import { nextAttempt } from '../webhooks/retry-policy.js';
import { type Resolve, send } from '../webhooks/send.js';
import type { Facts } from './fan-out.js';
import { slackMessage } from './message.js';
import { webhookUrlOf } from './repository.js';
import { failureOf } from './failure.js';
import type { Sealer } from '../integrations/secrets.js';

const POLL_MS = 1000;
const BATCH = 20;

/**
 * Sends due alert messages to Slack, at least once, as the webhook dispatcher sends deliveries:
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
    const until = message.lease_until;
    if (until === null) return;
    const held = { table: 'alert_messages' as const, lease: 'lease_until' as const, id: message.id, until };
    const alert = await db.selectFrom('alerts').selectAll().where('id', '=', message.alert_id).executeTakeFirst();
    if (alert?.active !== 1) {
      await releaseLease(db, held, { status: 'failed', last_error: 'the alert is not active', next_attempt_at: null });
      return;
    }
    const url = webhookUrlOf(alert, sealer);
    if (url === undefined) {
      const lastError = 'the webhook URL cannot be read (INTEGRATIONS_SECRET changed?): send it again with PATCH';
      await releaseLease(db, held, { status: 'failed', last_error: lastError, next_attempt_at: null });
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
    const outcome = nextAttempt({
      attempts: message.attempts,
      schedule: gone ? [] : options.retryScheduleMs,
      result,
      now: Date.now(),
      random: Math.random(),
    });
    await releaseLease(db, held, {
      status: outcome.status,
      attempts: outcome.attempts,
      last_attempt_at: now(),
      last_response_status: result.status ?? null,
      last_error: outcome.lastError,
      next_attempt_at: outcome.nextAttemptAt,
    });
    if (outcome.retryInMs !== null && outcome.retryInMs < POLL_MS) setTimeout(rounds.wake, outcome.retryInMs).unref();
  }

  async function round(): Promise<void> {
    const at = now();
    const due = await claimLeases(db, {
      table: 'alert_messages',
      lease: 'lease_until',
      due: (eb) => eb.and([eb('status', '=', 'pending'), eb('next_attempt_at', '<=', at)]),
      orderBy: 'next_attempt_at',
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
