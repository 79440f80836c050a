import type { Kysely, Transaction } from 'kysely';
import type { Database, WebhookDeliveriesTable, WebhookSubscriptionsTable } from '../db/types.js';
import { emit } from '../events/outbox.js';
import { conflict } from '../http/errors.js';
import { keysetList, NEWEST_FIRST } from '../http/pagination.js';
import { now } from '../time.js';
import { newDelivery } from './dispatcher.js';
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
  await trx.updateTable('events').set({ fanned_out: 1 }).where('id', '=', eventId).execute();
  const delivery = newDelivery(subscription.tenant_id, subscription.id, eventId, 'webhook.test', now());
  await trx.insertInto('webhook_deliveries').values(delivery).execute();
  return toDelivery(delivery);
}
