import { Type, type Static } from '@sinclair/typebox';
import { ListQuery, MAX_SAFE_INTEGER, Nullable, Timestamp } from '../http/schemas.js';
import { RoundTrip } from '../http/round-trip.js';

const SortOrder = Type.Integer({
  minimum: 0,
  maximum: MAX_SAFE_INTEGER,
  description: 'Defaults to one more than the highest, 0 for the first',
});

export const TopicEntry = Type.Object(
  {
    topicEntryId: Type.String(),
    topicId: Type.String(),
    sortOrder: Type.Number(),
    content: Type.Object({ type: Type.String(), content: Type.String() }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'TopicEntry' },
);
export type TopicEntry = Static<typeof TopicEntry>;

export const Topic = Type.Object(
  {
    topicId: Type.String(),
    title: Type.String(),
    purpose: Nullable(Type.String()),
    sortOrder: Type.Number(),
    isDefault: Type.Boolean({ description: "The tenant's first topic is its default; exactly one topic per tenant is" }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    entries: Type.Array(TopicEntry, { description: "All the topic's entries, in sortOrder order" }),
  },
  { $id: 'Topic' },
);
export type Topic = Static<typeof Topic>;

export const TopicCreate = Type.Object(
  { title: Type.String({ minLength: 1 }), sortOrder: Type.Optional(SortOrder) },
  { additionalProperties: false, $id: 'TopicCreate' },
);
export type TopicCreate = Static<typeof TopicCreate>;

export const TopicEntryCreate = Type.Object(
  {
    content: Type.Object(
      { type: Type.String({ minLength: 1, description: 'Any non-empty string; stored as given' }), content: Type.String() },
      { additionalProperties: false },
    ),
    sortOrder: Type.Optional(SortOrder),
  },
  { additionalProperties: false, $id: 'TopicEntryCreate' },
);
export type TopicEntryCreate = Static<typeof TopicEntryCreate>;

/** The topic's other fields (its entries too) as read (read-only). */
export const TopicUpdate = RoundTrip(
  Topic,
  Type.Object(
    {
      title: Type.Optional(Type.String({ minLength: 1 })),
      purpose: Type.Optional(Nullable(Type.String())),
      sortOrder: Type.Optional(SortOrder),
      isDefault: Type.Optional(
        Type.Boolean({
          description:
            "true makes it the tenant's default topic (the former default stops being it); false only as read (a topic that is not the default): a tenant always has one",
        }),
      ),
    },
    { additionalProperties: false, $id: 'TopicUpdate' },
  ),
);
export type TopicUpdate = Static<typeof TopicUpdate>;

/** The entry's other fields as read (read-only). */
export const TopicEntryUpdate = RoundTrip(
  TopicEntry,
  Type.Object(
    { content: Type.Optional(TopicEntryCreate.properties.content), sortOrder: Type.Optional(SortOrder) },
    { additionalProperties: false, $id: 'TopicEntryUpdate' },
  ),
);
export type TopicEntryUpdate = Static<typeof TopicEntryUpdate>;

export const TopicParams = Type.Object({ topic_id: Type.String() });
export const TopicEntryParams = Type.Object({ topic_id: Type.String(), topic_entry_id: Type.String() });
export const TopicListQuery = ListQuery({});
export type TopicListQuery = Static<typeof TopicListQuery>;
