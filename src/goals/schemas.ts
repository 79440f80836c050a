import { Type, type Static } from '@sinclair/typebox';
import { GOAL_KINDS } from '../db/enums.js';
import { RoundTrip } from '../http/round-trip.js';
import { ListQuery, Nullable, StringEnum, Timestamp } from '../http/schemas.js';
import { idPattern } from '../ids.js';

export const GoalId = Type.String({ minLength: 1, pattern: idPattern('goal') });

/** The bounds of what a goal names; the measuring script cuts names to the same lengths. */
export const MAX_NAME_LENGTH = 255;
export const MAX_PURPOSE_LENGTH = 100;
export const MAX_EVENT_NAME_LENGTH = 100;

const Name = Type.String({ minLength: 1, maxLength: MAX_NAME_LENGTH });
const Kind = StringEnum(GOAL_KINDS, {
  description:
    'What counts: a lead form sent, an action clicked, a link path visited, a pam.track event, a scroll at least `threshold` percent deep on a path matching `pathPattern` (goals only)',
});
const PageIdField = Type.String({ minLength: 1, maxLength: 64, description: 'kind form: only forms of this page (optional)' });
const ActionPurpose = Type.String({
  minLength: 1,
  maxLength: MAX_PURPOSE_LENGTH,
  description: 'kind action: a click on a page action with this purpose',
});
const LinkPath = Type.String({
  minLength: 1,
  maxLength: 2048,
  pattern: '^/\\S*$',
  description: 'kind path: a visit served at this link path',
});
const EventName = Type.String({
  minLength: 1,
  maxLength: MAX_EVENT_NAME_LENGTH,
  description: "kind event: pam.track(eventName, { value }) from the page's scripts",
});
const PathPattern = Type.String({
  minLength: 1,
  maxLength: 2048,
  pattern: '^[/*]\\S*$',
  description: 'kind scroll: a glob on the path the visit was served at (`*` any characters, `?` one), without regard to ASCII case',
});
const Threshold = Type.Integer({
  minimum: 1,
  maximum: 100,
  description: 'kind scroll: the depth in percent the visit scrolled at least (once per visit)',
});
/** A scroll goal's fields (issue 49): goals only, not funnel steps. */
const ScrollFields = { pathPattern: Nullable(PathPattern), threshold: Nullable(Threshold) };
const ScrollInput = { pathPattern: Type.Optional(Nullable(PathPattern)), threshold: Type.Optional(Nullable(Threshold)) };

/** The bound a goal's value may be given, and what it is unless given. */
export const MAX_VALUE_LIMIT = 1e15;
export const DEFAULT_MAX_VALUE = 1_000_000;
const MaxValue = Type.Number({
  exclusiveMinimum: 0,
  maximum: MAX_VALUE_LIMIT,
  description: `Extension. What one visit's value adds to the goal at most: a visit that tracked more counts this much (default ${DEFAULT_MAX_VALUE})`,
});
const Currency = Type.String({ minLength: 3, maxLength: 3, description: 'ISO 4217 code of the tracked values, e.g. EUR' });

/** The fields that say what a goal (or a funnel step) counts: `kind` and the one field of that kind. */
export const TargetFields = {
  kind: Kind,
  pageId: Nullable(PageIdField),
  actionPurpose: Nullable(ActionPurpose),
  path: Nullable(LinkPath),
  eventName: Nullable(EventName),
};
export const TargetInput = {
  kind: Kind,
  pageId: Type.Optional(Nullable(PageIdField)),
  actionPurpose: Type.Optional(Nullable(ActionPurpose)),
  path: Type.Optional(Nullable(LinkPath)),
  eventName: Type.Optional(Nullable(EventName)),
};
export type TargetInput = Static<ReturnType<typeof Type.Object<typeof TargetInput>>>;

export const Goal = Type.Object(
  {
    goalId: GoalId,
    name: Type.String(),
    ...TargetFields,
    ...ScrollFields,
    currency: Nullable(Type.String()),
    maxValue: Type.Number(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Goal' },
);
export type Goal = Static<typeof Goal>;

export const GoalCreate = Type.Object(
  { name: Name, ...TargetInput, ...ScrollInput, currency: Type.Optional(Nullable(Currency)), maxValue: Type.Optional(MaxValue) },
  { additionalProperties: false, $id: 'GoalCreate' },
);
export type GoalCreate = Static<typeof GoalCreate>;

/** The goal's timestamps as read (read-only). Changing `kind` clears the other kinds' fields not given. */
export const GoalUpdate = RoundTrip(
  Goal,
  Type.Object(
    {
      name: Type.Optional(Name),
      kind: Type.Optional(Kind),
      pageId: Type.Optional(Nullable(PageIdField)),
      actionPurpose: Type.Optional(Nullable(ActionPurpose)),
      path: Type.Optional(Nullable(LinkPath)),
      eventName: Type.Optional(Nullable(EventName)),
      ...ScrollInput,
      currency: Type.Optional(Nullable(Currency)),
      maxValue: Type.Optional(MaxValue),
    },
    { additionalProperties: false, $id: 'GoalUpdate' },
  ),
);
export type GoalUpdate = Static<typeof GoalUpdate>;

export const GoalListQuery = ListQuery({});
export type GoalListQuery = Static<typeof GoalListQuery>;

export const GoalParams = Type.Object({ goal_id: GoalId });
