import { roundLoop } from '../jobs/index.js';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { WebhookDelivery } from '../config.js';
import type { Database, WebhookDeliveriesTable } from '../db/types.js';
import { now } from '../time.js';
import {
  attemptOutcome,
  consume,
  givenUp,
  type HeldAttempt,
  heldAttempt,
  releaseAttempt,
  failingTooLong,
  type Resolve,
  send,
  type SendResult,
  systemResolve,
} from '../events/index.js';
import {
  claimDueDeliveries,
  deliveryTarget,
  disableSubscription,
  fanOut,
  markSubscriptionFailing,
  markSubscriptionHealthy,
} from './deliveries.js';
import { signatureHeader } from './signing.js';

/**
 * Delivers events to webhook subscribers, at least once. Safe to run in several processes on one
 * database: work is claimed with a lease (events/queue.ts), and an outcome is recorded only by the
 * holder of the lease. A crash leaves leases that simply expire; the work is then claimed again
 * (which is why delivery is at least once).
 *
 * 1. Fan-out: each new event gets one delivery per active subscription that wants its type, as the
 *    outbox's `webhooks` consumer (events/consumers.ts).
 * 2. Attempts: due deliveries are claimed and sent (at most `maxInFlight` at once in this process,
 *    `maxInFlightPerSubscription` per subscription); the outcome (events/retry-policy.ts) is recorded as
 *    soon as it is known.
 *
 * Old events and deliveries are pruned by the maintenance job (jobs/maintenance.ts), which runs
 * whether this process dispatches or not.
 */
export interface Dispatcher {
  start(): void;
  /** Something was written: look now rather than at the next poll. */
  wake(): void;
  stop(): Promise<void>;
}

const POLL_MS = 1000;
/** Under a stream of writes, wake-ups coalesce into at most one round per this many ms. */
const MIN_ROUND_GAP_MS = 20;
const BATCH = 100;

/** How an attempt ended, for the metrics: delivered, to be retried, given up, or not made (subscription inactive). */
export type AttemptOutcome = 'succeeded' | 'retrying' | 'failed' | 'skipped';

export function createDispatcher(
  db: Kysely<Database>,
  options: WebhookDelivery,
  log: FastifyBaseLogger,
  onOutcome?: (outcome: AttemptOutcome) => void,
  resolve: Resolve = systemResolve,
): Dispatcher {
  // A claim outlives the longest attempt, so a live holder never loses it mid-attempt.
  const leaseMs = options.timeoutMs + 5000;
  const inFlight = new Map<string, Promise<void>>();
  const perSubscription = new Map<string, number>();

  const later = (ms: number) => new Date(Date.now() + ms).toISOString();

  type Held = HeldAttempt<'webhook_deliveries'>;

  async function attempt(delivery: WebhookDeliveriesTable, held: Held): Promise<void> {
    const { subscription, payload } = await deliveryTarget(db, delivery);
    const at = now();
    if (!subscription || payload === undefined || subscription.active !== 1) {
      await releaseAttempt(db, held, givenUp('the subscription is not active', at));
      onOutcome?.('skipped');
      return;
    }
    const timestamp = Math.floor(Date.now() / 1000);
    const secrets = [subscription.secret];
    if (subscription.previous_secret && subscription.previous_secret_expires_at && subscription.previous_secret_expires_at > at) {
      secrets.push(subscription.previous_secret);
    }
    const result = await send(
      subscription.url,
      payload,
      {
        'content-type': 'application/json',
        'user-agent': 'page-audience-api-webhooks/1',
        'webhook-id': delivery.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(secrets, delivery.id, timestamp, payload),
      },
      { timeoutMs: options.timeoutMs, allowPrivate: options.allowPrivate, resolve },
    );
    await settle(delivery, held, result);
  }

  async function settle(delivery: WebhookDeliveriesTable, held: Held, result: SendResult): Promise<void> {
    const { outcome, at, changes } = attemptOutcome({ attempts: delivery.attempts, schedule: options.retryScheduleMs, result });
    // A 410 disables the subscription before the delivery shows as finished: whoever sees the
    // failed delivery sees the subscription disabled too.
    if (outcome.subscription === 'gone') await disable(delivery.subscription_id, 'the endpoint answered 410 Gone');
    const recorded = await releaseAttempt(db, held, changes);
    onOutcome?.(outcome.status === 'pending' ? 'retrying' : outcome.status);
    // Sooner than the next poll: a timer, so the retry is not late.
    if (outcome.retryInMs !== null && outcome.retryInMs < POLL_MS) setTimeout(rounds.wake, outcome.retryInMs).unref();
    if (outcome.subscription === 'healthy') {
      if (recorded) await markSubscriptionHealthy(db, delivery.subscription_id);
    } else if (outcome.subscription !== 'gone') {
      const subscription = await markSubscriptionFailing(db, delivery.subscription_id, at);
      if (subscription?.active === 1 && subscription.failing_since && failingTooLong(subscription.failing_since, at)) {
        await disable(delivery.subscription_id, 'every delivery failed for 5 days');
      }
    }
  }

  async function disable(subscriptionId: string, reason: string): Promise<void> {
    if (await disableSubscription(db, subscriptionId))
      log.warn({ note: 'webhook_subscription.disabled', subscriptionId, reason }, 'webhook_subscription.disabled');
  }

  function launch(delivery: WebhookDeliveriesTable): void {
    // The claim just set its lease; a row without one was not claimed by this process.
    const held = heldAttempt('webhook_deliveries', delivery);
    if (held === undefined) return;
    const count = perSubscription.get(delivery.subscription_id) ?? 0;
    if (count >= options.maxInFlightPerSubscription) {
      // One slow endpoint must not hold every slot: give this one back for a later round.
      void releaseAttempt(db, held);
      return;
    }
    perSubscription.set(delivery.subscription_id, count + 1);
    const run = attempt(delivery, held)
      .catch((err: unknown) => log.error({ err, deliveryId: delivery.id }, 'webhook attempt failed to record'))
      .finally(() => {
        inFlight.delete(delivery.id);
        const left = (perSubscription.get(delivery.subscription_id) ?? 1) - 1;
        if (left > 0) perSubscription.set(delivery.subscription_id, left);
        else perSubscription.delete(delivery.subscription_id);
        rounds.wake(); // a slot is free
      });
    inFlight.set(delivery.id, run);
  }

  async function tick(): Promise<void> {
    await consume(db, 'webhooks', fanOut, BATCH);
    const free = options.maxInFlight - inFlight.size;
    for (const delivery of await claimDueDeliveries(db, free, later(leaseMs))) launch(delivery);
  }

  // a stream of writes costs one round per MIN_ROUND_GAP_MS, not one per write
  const rounds = roundLoop({
    round: tick,
    pollMs: POLL_MS,
    minGapMs: MIN_ROUND_GAP_MS,
    onError: (err) => log.error({ err }, 'webhook dispatcher round failed'),
  });

  return {
    start: rounds.start,
    wake: rounds.wake,
    async stop() {
      await rounds.stop();
      await Promise.allSettled(inFlight.values());
    },
  };
}
