import { Type, type Static } from '@sinclair/typebox';
import { DELIVERY_STATUSES } from '../db/enums.js';
import { ListEnvelope, ListQuery, Nullable, StringEnum, Timestamp } from '../http/schemas.js';
import { RoundTrip } from '../http/round-trip.js';

/** The events an alert can wake on: a person's visit starting, a lead. */
export const ALERT_EVENTS = ['visit.started', 'form.submitted'] as const;
export type AlertEvent = (typeof ALERT_EVENTS)[number];

const Ids = (what: string) =>
  Nullable(
    Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      minItems: 1,
      maxItems: 100,
      uniqueItems: true,
      description: `Only events of these ${what}; null (or absent) for any`,
    }),
  );

const Channel = Type.Object(
  {
    type: StringEnum(['slack'] as const),
    webhookUrl: Type.String({
      minLength: 1,
      maxLength: 2048,
      description:
        "A Slack incoming webhook's URL: https:// (and not a private address) as for webhook subscriptions. A secret: stored encrypted and returned masked, `https://hooks.slack.com/services/T…/…/` and its last 4 characters; sent back masked, the stored URL is kept",
    }),
  },
  { additionalProperties: false },
);

const When = Type.Object(
  {
    event: StringEnum(ALERT_EVENTS),
    accountIds: Type.Optional(Ids('accounts')),
    segmentIds: Type.Optional(Ids('audiences (segments) matched by the visit')),
    pageIds: Type.Optional(Ids('pages')),
  },
  { additionalProperties: false },
);

export const Alert = Type.Object(
  {
    alertId: Type.String(),
    name: Type.String(),
    channel: Channel,
    when: Type.Object({
      event: StringEnum(ALERT_EVENTS),
      accountIds: Nullable(Type.Array(Type.String())),
      segmentIds: Nullable(Type.Array(Type.String())),
      pageIds: Nullable(Type.Array(Type.String())),
    }),
    active: Type.Boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Alert' },
);
export type Alert = Static<typeof Alert>;

const Name = Type.String({ minLength: 1, maxLength: 200 });

export const AlertCreate = Type.Object(
  { name: Name, channel: Channel, when: When, active: Type.Optional(Type.Boolean({ default: true })) },
  { additionalProperties: false, $id: 'AlertCreate' },
);
export type AlertCreate = Static<typeof AlertCreate>;

export const AlertUpdate = RoundTrip(
  Alert,
  Type.Object(
    { name: Type.Optional(Name), channel: Type.Optional(Channel), when: Type.Optional(When), active: Type.Optional(Type.Boolean()) },
    { additionalProperties: false, $id: 'AlertUpdate' },
  ),
);
export type AlertUpdate = Static<typeof AlertUpdate>;

export const AlertListQuery = ListQuery({});
export type AlertListQuery = Static<typeof AlertListQuery>;
export const AlertPage = ListEnvelope(Alert);
export const AlertParams = Type.Object({ alert_id: Type.String() });

export const AlertMessage = Type.Object(
  {
    messageId: Type.String(),
    eventType: Type.String(),
    status: StringEnum(DELIVERY_STATUSES),
    attempts: Type.Integer({ minimum: 0 }),
    more: Type.Integer({ minimum: 0, description: 'Matching events of the hour before that had no message of their own' }),
    lastAttemptAt: Nullable(Timestamp),
    nextAttemptAt: Nullable(Timestamp),
    lastResponseStatus: Nullable(Type.Integer()),
    lastError: Nullable(Type.String()),
    createdAt: Timestamp,
  },
  { $id: 'AlertMessage' },
);
export type AlertMessage = Static<typeof AlertMessage>;
export const AlertMessageListQuery = ListQuery({});
export type AlertMessageListQuery = Static<typeof AlertMessageListQuery>;
