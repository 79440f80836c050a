import type { Kysely, Transaction } from 'kysely';
import type { Database, WebhookDeliveriesTable, WebhookSubscriptionsTable } from '../db/types.js';
import { claimLeases, releaseLease } from '../db/lease.js';
import { type Mentions, mentioning } from '../db/mentions.js';
import { claimEventsToFanOut, keepFromFanOut, markFannedOut, pruneEventsBefore } from '../events/keeping.js';
import { emit } from '../events/outbox.js';
import { conflict } from '../http/errors.js';
import { keysetList, NEWEST_FIRST } from '../http/pagination.js';
import { now } from '../time.js';
import { newId } from '../ids.js';
import type { Delivery, DeliveryListQuery } from './schemas.js';

export const toDelivery = (row: WebhookDeliveriesTable): Delivery => ({
  deliveryId: row.id,
  eventId: row.event_id,
  eventType: row.event_type,
  status: row.status,
  attempts: row.attempts,
  lastAttemptAt: row.last_attempt_at,
  nextAttemptAt: row.next_attempt_at,
  lastResponseStatus: row.last_response_status,
  lastError: row.last_error,
  createdAt: row.created_at,
});

const deliveriesList = keysetList({ name: 'deliveries', table: 'webhook_deliveries', ...NEWEST_FIRST });

export async function listDeliveries(db: Kysely<Database>, subscription: WebhookSubscriptionsTable, query: DeliveryListQuery) {
  const ofSubscription = db.selectFrom('webhook_deliveries').where('subscription_id', '=', subscription.id);
  return deliveriesList.read({ query, within: subscription.id, rows: ofSubscription.selectAll(), count: ofSubscription, map: toDelivery });
}

/** A finished delivery (succeeded or failed) is sent again now; a pending one is still in hand (409). */
export async function retryDelivery(
  db: Kysely<Database>,
  subscription: WebhookSubscriptionsTable,
  deliveryId: string,
): Promise<Delivery | undefined> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('id', '=', deliveryId)
    .where('subscription_id', '=', subscription.id)
    .executeTakeFirst();
  if (!row) return undefined;
  if (row.status === 'pending') throw conflict('The delivery is still pending; it will be attempted on its schedule');
  const updated = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', next_attempt_at: now(), lease_until: null })
    .where('id', '=', deliveryId)
    .where('status', '=', row.status)
    .returningAll()
    .executeTakeFirst();
  if (!updated) throw conflict('The delivery changed meanwhile; read it again');
  return toDelivery(updated);
}

/** A `webhook.test` event for this subscription alone, sent now. */
export async function sendTest(trx: Transaction<Database>, subscription: WebhookSubscriptionsTable): Promise<Delivery> {
  if (subscription.active !== 1) throw conflict('The subscription is not active; activate it to send a test');
  const eventId = await emit(trx, subscription.tenant_id, 'webhook.test', {
    subscriptionId: subscription.id,
    message: 'This is a test event.',
  });
  // Fanned out here, to this subscription only.
  await keepFromFanOut(trx, eventId);
  const delivery = newDelivery(subscription.tenant_id, subscription.id, eventId, 'webhook.test', now());
  await trx.insertInto('webhook_deliveries').values(delivery).execute();
  return toDelivery(delivery);
}

// What the dispatcher (dispatcher.ts) reads and writes. Claims and outcomes go through db/lease.ts:
// several instances may dispatch from one database.

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

/** Rows per insert statement, well within every dialect's limit on parameters. */
const INSERT_CHUNK = 100;

/**
 * Fan-out of up to `batch` new events: each gets one delivery per active subscription of its
 * tenant that wants its type (or `*`). The events are claimed with a lease first, so two
 * dispatchers never fan out the same event. Returns how many events were fanned out.
 */
/** Other work an event causes, done in the fan-out's transaction so it happens exactly once too (alerts). */
export type FanOutListener = (
  trx: Transaction<Database>,
  events: readonly { id: string; tenant_id: string; type: string }[],
) => Promise<void>;

export async function fanOut(
  db: Kysely<Database>,
  batch: number,
  until: string,
  listeners: readonly FanOutListener[] = [],
): Promise<number> {
  const events = await claimEventsToFanOut(db, batch, until);
  if (events.length === 0) return 0;
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
    for (let i = 0; i < deliveries.length; i += INSERT_CHUNK) {
      await trx
        .insertInto('webhook_deliveries')
        .values(deliveries.slice(i, i + INSERT_CHUNK))
        .execute();
    }
    for (const listener of listeners) await listener(trx, events);
    await markFannedOut(
      trx,
      events.map((e) => e.id),
    );
  });
  return events.length;
}

/** Up to `limit` pending deliveries whose attempt is due, earliest first, leased until `until`. */
export async function claimDueDeliveries(db: Kysely<Database>, limit: number, until: string): Promise<WebhookDeliveriesTable[]> {
  const at = now();
  return claimLeases(db, {
    table: 'webhook_deliveries',
    lease: 'lease_until',
    due: (eb) => eb.and([eb('status', '=', 'pending'), eb('next_attempt_at', '<=', at)]),
    orderBy: 'next_attempt_at',
    limit,
    now: at,
    until,
  });
}

/** What an attempt sends: the subscription (undefined when deleted) and the event's body. */
export async function deliveryTarget(db: Kysely<Database>, delivery: WebhookDeliveriesTable) {
  const [subscription, event] = await Promise.all([
    db.selectFrom('webhook_subscriptions').selectAll().where('id', '=', delivery.subscription_id).executeTakeFirst(),
    db.selectFrom('events').select('payload').where('id', '=', delivery.event_id).executeTakeFirst(),
  ]);
  return { subscription, payload: event?.payload };
}

/**
 * Records the outcome of the attempt leased until `until`, and frees the delivery; false when the
 * lease was lost (the delivery was claimed again meanwhile), and nothing is written.
 */
export function recordOutcome(
  db: Kysely<Database>,
  delivery: WebhookDeliveriesTable,
  until: string,
  changes: Partial<WebhookDeliveriesTable> = {},
): Promise<boolean> {
  return releaseLease(db, { table: 'webhook_deliveries', lease: 'lease_until', id: delivery.id, until }, changes);
}

/** How long events (and their deliveries) are kept: docs/webhooks.md says 30 days. */
const KEEP_EVENTS_MS = 30 * 24 * 60 * 60 * 1000;

/** Housekeeping (jobs/maintenance.ts): events older than 30 days go, their deliveries first. */
export async function pruneEvents(db: Kysely<Database>): Promise<void> {
  const cutoff = new Date(Date.now() - KEEP_EVENTS_MS).toISOString();
  await db
    .deleteFrom('webhook_deliveries')
    .where('event_id', 'in', (eb) => eb.selectFrom('events').select('id').where('created_at', '<', cutoff))
    .execute();
  await pruneEventsBefore(db, cutoff);
}

/** A person's erasure (persons/erasure.ts): the delivery errors that quote them are cleared. */
export async function redactDeliveryErrors(trx: Transaction<Database>, tenantId: string, mentions: Mentions): Promise<void> {
  for (const id of await mentioning(trx, 'webhook_deliveries', 'last_error', tenantId, mentions)) {
    await trx.updateTable('webhook_deliveries').set({ last_error: 'redacted' }).where('id', '=', id).execute();
  }
}

/** A delivery succeeded: the subscription is no longer failing. */
export async function markSubscriptionHealthy(db: Kysely<Database>, subscriptionId: string): Promise<void> {
  await db
    .updateTable('webhook_subscriptions')
    .set({ failing_since: null })
    .where('id', '=', subscriptionId)
    .where('failing_since', 'is not', null)
    .execute();
}

/** A delivery failed: the subscription is failing from `at` on, unless it already was. Its state after that. */
export async function markSubscriptionFailing(db: Kysely<Database>, subscriptionId: string, at: string) {
  await db
    .updateTable('webhook_subscriptions')
    .set({ failing_since: at })
    .where('id', '=', subscriptionId)
    .where('failing_since', 'is', null)
    .execute();
  return db.selectFrom('webhook_subscriptions').select(['failing_since', 'active']).where('id', '=', subscriptionId).executeTakeFirst();
}

/** True when this call disabled the subscription (false when it was inactive or gone already). */
export async function disableSubscription(db: Kysely<Database>, subscriptionId: string): Promise<boolean> {
  const result = await db
    .updateTable('webhook_subscriptions')
    .set({ active: 0, updated_at: now() })
    .where('id', '=', subscriptionId)
    .where('active', '=', 1)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
