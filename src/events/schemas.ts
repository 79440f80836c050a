import { Type, type Static } from '@sinclair/typebox';
import { ListQuery, Timestamp } from '../http/schemas.js';

export const Event = Type.Object(
  {
    eventId: Type.String(),
    type: Type.String(),
    createdAt: Timestamp,
    payload: Type.Unsafe<Record<string, unknown>>({
      type: 'object',
      additionalProperties: true,
      description: 'The webhook body, exactly as delivered: {type, timestamp, data} (+ previousStatus)',
    }),
  },
  { $id: 'Event' },
);
export type Event = Static<typeof Event>;

export const EventListQuery = ListQuery({ type: Type.Optional(Type.String({ maxLength: 100, description: 'Only events of this type' })) });
export type EventListQuery = Static<typeof EventListQuery>;
export const EventParams = Type.Object({ event_id: Type.String() });
