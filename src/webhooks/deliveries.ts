import type { Kysely, Transaction } from 'kysely';
import type { Database, WebhookDeliveriesTable, WebhookSubscriptionsTable } from '../db/types.js';
import { type Mentions, mentioning } from '../db/mentions.js';
import {
  claimDueAttempts,
  emit,
  type EventHandler,
  eventIdsBefore,
  eventPayload,
  firstAttempt,
  pruneEventsBefore,
} from '../events/index.js';
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
  // Delivered here, to this subscription only: the fan-out passes test events by.
  const delivery = newDelivery(subscription.tenant_id, subscription.id, eventId, 'webhook.test', now());
  await trx.insertInto('webhook_deliveries').values(delivery).execute();
  return toDelivery(delivery);
}

// What the dispatcher (dispatcher.ts) reads and writes. Claims and outcomes go through the delivery
// queue (events/queue.ts): several instances may dispatch from one database.

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
    ...firstAttempt(at),
  };
}

/** Rows per insert statement, well within every dialect's limit on parameters. */
const INSERT_CHUNK = 100;

/**
 * The webhooks' consumer of the outbox (events/consumers.ts): each event gets one delivery per
 * active subscription of its tenant that wants its type (or `*`), in the transaction that moves the
 * consumer's cursor, so exactly once. A subscription's test event is not fanned out: `sendTest`
 * made its one delivery.
 */
export const fanOut: EventHandler = async (trx, batch) => {
  const events = batch.filter((e) => e.type !== 'webhook.test');
  if (events.length === 0) return;
  // One read of the subscriptions and one insert per chunk for the whole batch.
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
};

/** Up to `limit` pending deliveries whose attempt is due, earliest first, leased until `until`. */
export async function claimDueDeliveries(db: Kysely<Database>, limit: number, until: string): Promise<WebhookDeliveriesTable[]> {
  return claimDueAttempts(db, { table: 'webhook_deliveries', limit, until, now: now() });
}

/** What an attempt sends: the subscription (undefined when deleted) and the event's body. */
export async function deliveryTarget(db: Kysely<Database>, delivery: WebhookDeliveriesTable) {
  const [subscription, event] = await Promise.all([
    db.selectFrom('webhook_subscriptions').selectAll().where('id', '=', delivery.subscription_id).executeTakeFirst(),
    eventPayload(db, delivery.event_id),
  ]);
  return { subscription, payload: event };
}

/** How long events (and their deliveries) are kept: docs/webhooks.md says 30 days. */
const KEEP_EVENTS_MS = 30 * 24 * 60 * 60 * 1000;

/** Housekeeping (jobs/maintenance.ts): events older than 30 days go, their deliveries first. */
export async function pruneEvents(db: Kysely<Database>): Promise<void> {
  const cutoff = new Date(Date.now() - KEEP_EVENTS_MS).toISOString();
  await db.deleteFrom('webhook_deliveries').where('event_id', 'in', eventIdsBefore(db, cutoff)).execute();
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
