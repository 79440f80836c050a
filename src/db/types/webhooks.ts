import type { Generated } from 'kysely';
import type { DELIVERY_STATUSES } from '../enums.js';
import type { OneOf } from './one-of.js';

export interface WebhookSubscriptionsTable {
  id: string;
  tenant_id: string;
  url: string;
  events: string;
  active: number;
  secret: string;
  /** During a rotation, deliveries are signed with both secrets until this expires. */
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
  /** Since when every delivery has failed; a subscription failing for 5 days is disabled. */
  failing_since: string | null;
}

export interface EventsTable {
  id: string;
  tenant_id: string;
  type: string;
  /** The webhook body, exactly as sent: `{type, timestamp, data}` (+ `previousStatus`). */
  payload: string;
  created_at: string;
  /** Unused since migration 0069 (each consumer keeps a cursor); still named by PostgreSQL's collector function. */
  fanned_out: number;
  fan_lease_until: string | null;
  /** Its place in the outbox (migration 0069): set by the database, the order consumers read in. */
  position: Generated<number>;
}

/** One consumer of the outbox (events/consumers.ts): the last event it has consumed. */
export interface OutboxConsumersTable {
  name: string;
  position: number;
  event_id: string;
  updated_at: string;
}

/** PostgreSQL: an event a consumer has read above its cursor, while an older transaction still ran (consumers.ts). */
export interface OutboxConsumedAheadTable {
  consumer: string;
  position: number;
  event_id: string;
}

/** SQLite only: a floor for the next event's position, raised as events are pruned (migrations 0069, 0072). */
export interface EventSequenceTable {
  name: string;
  last: number;
}

export interface WebhookDeliveriesTable {
  id: string;
  tenant_id: string;
  subscription_id: string;
  event_id: string;
  event_type: string;
  status: OneOf<typeof DELIVERY_STATUSES>;
  attempts: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_response_status: number | null;
  last_error: string | null;
  lease_until: string | null;
  created_at: string;
}
