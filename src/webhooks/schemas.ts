import { Type, type Static } from '@sinclair/typebox';
import { DELIVERY_STATUSES } from '../db/enums.js';
import { SUBSCRIBABLE_EVENTS } from '../events/index.js';
import { ListEnvelope, ListQuery, Nullable, StringEnum, Timestamp } from '../http/schemas.js';
import { RoundTrip } from '../http/round-trip.js';

const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'https:// (http:// only when the service allows it)' });
const Events = Type.Array(StringEnum(SUBSCRIBABLE_EVENTS), {
  minItems: 1,
  uniqueItems: true,
  description: 'Event types from the catalogue, or * for all',
});

export const WebhookSubscription = Type.Object(
  {
    subscriptionId: Type.String(),
    url: Type.String(),
    events: Type.Array(Type.String()),
    active: Type.Boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'WebhookSubscription' },
);
export type WebhookSubscription = Static<typeof WebhookSubscription>;

/** The subscription with its signing secret: shown on creation and rotation only. */
export const WebhookSubscriptionWithSecret = Type.Composite(
  [
    WebhookSubscription,
    Type.Object({ secret: Type.String({ description: 'whsec_ + base64 of 32 random bytes; shown only in this response' }) }),
  ],
  { $id: 'WebhookSubscriptionWithSecret' },
);
export type WebhookSubscriptionWithSecret = Static<typeof WebhookSubscriptionWithSecret>;

export const WebhookSubscriptionCreate = Type.Object(
  { url: Url, events: Events, active: Type.Optional(Type.Boolean({ default: true })) },
  { additionalProperties: false, $id: 'WebhookSubscriptionCreate' },
);
export type WebhookSubscriptionCreate = Static<typeof WebhookSubscriptionCreate>;

/** The subscription's other fields as read (read-only). */
export const WebhookSubscriptionUpdate = RoundTrip(
  WebhookSubscription,
  Type.Object(
    { url: Type.Optional(Url), events: Type.Optional(Events), active: Type.Optional(Type.Boolean()) },
    { additionalProperties: false, $id: 'WebhookSubscriptionUpdate' },
  ),
);
export type WebhookSubscriptionUpdate = Static<typeof WebhookSubscriptionUpdate>;

export const WebhookSubscriptionListQuery = ListQuery({});
export type WebhookSubscriptionListQuery = Static<typeof WebhookSubscriptionListQuery>;

export const WebhookSubscriptionPage = ListEnvelope(WebhookSubscription, {
  totalCount: 'The number of subscriptions in this response',
});

export const SubscriptionParams = Type.Object({ subscription_id: Type.String() });

export const Delivery = Type.Object(
  {
    deliveryId: Type.String({ description: 'Also the webhook-id header, the same on every attempt' }),
    eventId: Type.String(),
    eventType: Type.String(),
    status: StringEnum(DELIVERY_STATUSES),
    attempts: Type.Integer({ minimum: 0 }),
    lastAttemptAt: Nullable(Timestamp),
    nextAttemptAt: Nullable(Timestamp),
    lastResponseStatus: Nullable(Type.Integer()),
    lastError: Nullable(Type.String()),
    createdAt: Timestamp,
  },
  { $id: 'WebhookDelivery' },
);
export type Delivery = Static<typeof Delivery>;

export const DeliveryListQuery = ListQuery({});
export type DeliveryListQuery = Static<typeof DeliveryListQuery>;
export const DeliveryParams = Type.Object({ subscription_id: Type.String(), delivery_id: Type.String() });
