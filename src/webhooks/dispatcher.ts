import type { Kysely } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import type { WebhookDelivery } from '../config.js';
import type { Database, WebhookDeliveriesTable } from '../db/types.js';
import { newId } from '../ids.js';
import { now } from '../time.js';
import { send, type SendResult } from './send.js';
import { signatureHeader } from './signing.js';

/**
 * Delivers events to webhook subscribers, at least once. Safe to run in several processes on one
 * database: work is claimed with a lease by a conditional update (only one claimer can win a row),
 * and an outcome is recorded only by the holder of the lease. A crash leaves leases that simply
 * expire; the work is then claimed again (which is why delivery is at least once).
 *
 * 1. Fan-out: each new event gets one delivery per active subscription that wants its type.
 * 2. Attempts: due deliveries are claimed and sent (at most `maxInFlight` at once in this process,
 *    `maxInFlightPerSubscription` per subscription); the outcome is recorded as soon as it is known.
 * 3. Pruning: events older than 30 days go, with their deliveries.
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
const DISABLE_AFTER_MS = 5 * 24 * 60 * 60 * 1000;
const KEEP_EVENTS_MS = 30 * 24 * 60 * 60 * 1000;
const PRUNE_EVERY_MS = 60 * 60 * 1000;

export function createDispatcher(db: Kysely<Database>, options: WebhookDelivery, log: FastifyBaseLogger): Dispatcher {
  // A claim outlives the longest attempt, so a live holder never loses it mid-attempt.
  const leaseMs = options.timeoutMs + 5000;
  const inFlight = new Map<string, Promise<void>>();
  const perSubscription = new Map<string, number>();
  let running = false;
  let loop: Promise<void> | undefined;
  let wakeUp: (() => void) | undefined;
  let woken = false;
  let lastPrune = 0;

  const later = (ms: number) => new Date(Date.now() + ms).toISOString();

  async function fanOut(): Promise<void> {
    const at = now();
    const events = await db
      .updateTable('events')
      .set({ fan_lease_until: later(leaseMs) })
      .where('fanned_out', '=', 0)
      .where((eb) => eb.or([eb('fan_lease_until', 'is', null), eb('fan_lease_until', '<', at)]))
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('events')
          .select('id')
          .where('fanned_out', '=', 0)
          .where((w) => w.or([w('fan_lease_until', 'is', null), w('fan_lease_until', '<', at)]))
          .orderBy('created_at')
          .limit(BATCH),
      )
      .returning(['id', 'tenant_id', 'type'])
      .execute();
    if (events.length === 0) return;
    // One transaction for the whole batch: one read of the subscriptions, one insert, one update.
    await db.transaction().execute(async (trx) => {
      const tenants = [...new Set(events.map((e) => e.tenant_id))];
      const rows = await trx
        .selectFrom('webhook_subscriptions')
        .select(['id', 'tenant_id', 'events'])
        .where('tenant_id', 'in', tenants)
        .where('active', '=', 1)
        .execute();
      // Each subscription's event list is parsed once per batch, not once per event.
      const subscriptions = rows.map((s) => ({ id: s.id, tenant_id: s.tenant_id, types: new Set(JSON.parse(s.events) as string[]) }));
      const created = now();
      const deliveries = events.flatMap((event) =>
        subscriptions
          .filter((s) => s.tenant_id === event.tenant_id && (s.types.has(event.type) || s.types.has('*')))
          .map((s) => newDelivery(event.tenant_id, s.id, event.id, event.type, created)),
      );
      for (let i = 0; i < deliveries.length; i += BATCH) {
        await trx
          .insertInto('webhook_deliveries')
          .values(deliveries.slice(i, i + BATCH))
          .execute();
      }
      await trx
        .updateTable('events')
        .set({ fanned_out: 1, fan_lease_until: null })
        .where(
          'id',
          'in',
          events.map((e) => e.id),
        )
        .execute();
    });
  }

  async function claimDue(): Promise<WebhookDeliveriesTable[]> {
    const free = options.maxInFlight - inFlight.size;
    if (free <= 0) return [];
    const at = now();
    const lease = later(leaseMs);
    return db
      .updateTable('webhook_deliveries')
      .set({ lease_until: lease })
      .where('status', '=', 'pending')
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', at)]))
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('status', '=', 'pending')
          .where('next_attempt_at', '<=', at)
          .where((w) => w.or([w('lease_until', 'is', null), w('lease_until', '<', at)]))
          .orderBy('next_attempt_at')
          .limit(free),
      )
      .returningAll()
      .execute();
  }

  async function attempt(delivery: WebhookDeliveriesTable): Promise<void> {
    const lease = delivery.lease_until!;
    const [subscription, event] = await Promise.all([
      db.selectFrom('webhook_subscriptions').selectAll().where('id', '=', delivery.subscription_id).executeTakeFirst(),
      db.selectFrom('events').select('payload').where('id', '=', delivery.event_id).executeTakeFirst(),
    ]);
    const at = now();
    if (!subscription || !event || subscription.active !== 1) {
      await record(delivery, lease, {
        status: 'failed',
        last_attempt_at: at,
        last_error: 'the subscription is not active',
        next_attempt_at: null,
      });
      return;
    }
    const timestamp = Math.floor(Date.now() / 1000);
    const secrets = [subscription.secret];
    if (subscription.previous_secret && subscription.previous_secret_expires_at && subscription.previous_secret_expires_at > at) {
      secrets.push(subscription.previous_secret);
    }
    const result = await send(
      subscription.url,
      event.payload,
      {
        'content-type': 'application/json',
        'user-agent': 'page-audience-api-webhooks/1',
        'webhook-id': delivery.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(secrets, delivery.id, timestamp, event.payload),
      },
      options.timeoutMs,
      options.allowPrivate,
    );
    await settle(delivery, lease, result);
  }

  async function settle(delivery: WebhookDeliveriesTable, lease: string, result: SendResult): Promise<void> {
    const at = now();
    const attempts = delivery.attempts + 1;
    const outcome = { attempts, last_attempt_at: at, last_response_status: result.status ?? null };
    if (result.status !== undefined && result.status >= 200 && result.status < 300) {
      if (await record(delivery, lease, { ...outcome, status: 'succeeded', last_error: null, next_attempt_at: null })) {
        await db
          .updateTable('webhook_subscriptions')
          .set({ failing_since: null })
          .where('id', '=', delivery.subscription_id)
          .where('failing_since', 'is not', null)
          .execute();
      }
      return;
    }
    const error = result.error ?? `HTTP ${result.status}`;
    if (result.status === 410) {
      // The receiver says the endpoint is gone for good.
      await record(delivery, lease, {
        ...outcome,
        status: 'failed',
        last_error: 'HTTP 410: the subscription was disabled',
        next_attempt_at: null,
      });
      await disable(delivery.subscription_id, 'the endpoint answered 410 Gone');
      return;
    }
    const delay = options.retryScheduleMs[attempts - 1];
    if (delay === undefined) {
      await record(delivery, lease, { ...outcome, status: 'failed', last_error: error, next_attempt_at: null });
    } else {
      const honoured = (result.status === 429 || result.status === 503) && result.retryAfterMs !== undefined;
      const wait = honoured ? result.retryAfterMs! : delay * (1 + Math.random() * 0.2);
      await record(delivery, lease, { ...outcome, status: 'pending', last_error: error, next_attempt_at: later(wait) });
      if (wait < POLL_MS) setTimeout(wake, wait).unref(); // sooner than the next poll
    }
    await noteFailure(delivery.subscription_id, at);
  }

  /** Only the holder of the lease may record; false when the lease was lost (the work moved on). */
  async function record(delivery: WebhookDeliveriesTable, lease: string, changes: Partial<WebhookDeliveriesTable>): Promise<boolean> {
    const result = await db
      .updateTable('webhook_deliveries')
      .set({ ...changes, lease_until: null })
      .where('id', '=', delivery.id)
      .where('lease_until', '=', lease)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async function noteFailure(subscriptionId: string, at: string): Promise<void> {
    await db
      .updateTable('webhook_subscriptions')
      .set({ failing_since: at })
      .where('id', '=', subscriptionId)
      .where('failing_since', 'is', null)
      .execute();
    const subscription = await db
      .selectFrom('webhook_subscriptions')
      .select(['failing_since', 'active'])
      .where('id', '=', subscriptionId)
      .executeTakeFirst();
    if (
      subscription?.active === 1 &&
      subscription.failing_since &&
      Date.parse(at) - Date.parse(subscription.failing_since) >= DISABLE_AFTER_MS
    ) {
      await disable(subscriptionId, 'every delivery failed for 5 days');
    }
  }

  async function disable(subscriptionId: string, reason: string): Promise<void> {
    const result = await db
      .updateTable('webhook_subscriptions')
      .set({ active: 0, updated_at: now() })
      .where('id', '=', subscriptionId)
      .where('active', '=', 1)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) > 0)
      log.warn({ note: 'webhook_subscription.disabled', subscriptionId, reason }, 'webhook_subscription.disabled');
  }

  async function prune(): Promise<void> {
    if (Date.now() - lastPrune < PRUNE_EVERY_MS) return;
    lastPrune = Date.now();
    const cutoff = new Date(Date.now() - KEEP_EVENTS_MS).toISOString();
    await db
      .deleteFrom('webhook_deliveries')
      .where('event_id', 'in', (eb) => eb.selectFrom('events').select('id').where('created_at', '<', cutoff))
      .execute();
    await db.deleteFrom('events').where('created_at', '<', cutoff).execute();
    await db.deleteFrom('idempotency_keys').where('expires_at', '<', now()).execute();
  }

  function launch(delivery: WebhookDeliveriesTable): void {
    const count = perSubscription.get(delivery.subscription_id) ?? 0;
    if (count >= options.maxInFlightPerSubscription) {
      // One slow endpoint must not hold every slot: give this one back for a later round.
      void db
        .updateTable('webhook_deliveries')
        .set({ lease_until: null })
        .where('id', '=', delivery.id)
        .where('lease_until', '=', delivery.lease_until)
        .execute();
      return;
    }
    perSubscription.set(delivery.subscription_id, count + 1);
    const run = attempt(delivery)
      .catch((err: unknown) => log.error({ err, deliveryId: delivery.id }, 'webhook attempt failed to record'))
      .finally(() => {
        inFlight.delete(delivery.id);
        const left = (perSubscription.get(delivery.subscription_id) ?? 1) - 1;
        if (left > 0) perSubscription.set(delivery.subscription_id, left);
        else perSubscription.delete(delivery.subscription_id);
        wake(); // a slot is free
      });
    inFlight.set(delivery.id, run);
  }

  async function tick(): Promise<void> {
    await fanOut();
    for (const delivery of await claimDue()) launch(delivery);
    await prune();
  }

  function wake(): void {
    woken = true;
    wakeUp?.();
  }

  async function run(): Promise<void> {
    while (running) {
      woken = false;
      const started = Date.now();
      try {
        await tick();
      } catch (err) {
        log.error({ err }, 'webhook dispatcher round failed');
      }
      if (!running) break;
      if (!woken) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, POLL_MS);
          wakeUp = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wakeUp = undefined;
      }
      // Woken during the round or after it: either way, rounds start at least this far apart, so
      // a stream of writes costs one round per 20 ms, not one per write.
      const gap = MIN_ROUND_GAP_MS - (Date.now() - started);
      if (gap > 0 && running) await new Promise((r) => setTimeout(r, gap));
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      loop = run();
    },
    wake,
    async stop() {
      running = false;
      wakeUp?.();
      await loop;
      await Promise.allSettled(inFlight.values());
    },
  };
}

export function newDelivery(
  tenantId: string,
  subscriptionId: string,
  eventId: string,
  eventType: string,
  at: string,
): WebhookDeliveriesTable {
  return {
    id: newId('delivery'),
    tenant_id: tenantId,
    subscription_id: subscriptionId,
    event_id: eventId,
    event_type: eventType,
    status: 'pending',
    attempts: 0,
    next_attempt_at: at,
    last_attempt_at: null,
    last_response_status: null,
    last_error: null,
    lease_until: null,
    created_at: at,
  };
}
