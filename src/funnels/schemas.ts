import { Type, type Static } from '@sinclair/typebox';
import { SITE_GROUP_BYS } from '../analytics/index.js';
import { MAX_GROUPS } from '../audiences/index.js';
import { TargetFields, TargetInput } from '../goals/index.js';
import { RoundTrip } from '../http/round-trip.js';
import { ListQuery, MAX_SAFE_INTEGER, Nullable, StringEnum, Timestamp } from '../http/schemas.js';
import { idPattern } from '../ids.js';

export const FunnelId = Type.String({ minLength: 1, pattern: idPattern('funnel') });

export const MIN_STEPS = 2;
export const MAX_STEPS = 8;
export const MAX_WINDOW_HOURS = 720;
export const DEFAULT_WINDOW_HOURS = 24;

const Name = Type.String({ minLength: 1, maxLength: 255 });
const WindowHours = Type.Integer({
  minimum: 1,
  maximum: MAX_WINDOW_HOURS,
  description: 'Every step must follow the first within this many hours',
});

export const FunnelStep = Type.Object({ name: Type.String(), ...TargetFields }, { $id: 'FunnelStep' });
export const FunnelStepInput = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Default: what the step counts, in words' })),
    ...TargetInput,
  },
  { additionalProperties: false, $id: 'FunnelStepInput' },
);
export type FunnelStepInput = Static<typeof FunnelStepInput>;
const Steps = Type.Array(FunnelStepInput, { minItems: MIN_STEPS, maxItems: MAX_STEPS, description: 'In the order a visitor takes them' });

export const Funnel = Type.Object(
  {
    funnelId: FunnelId,
    name: Type.String(),
    steps: Type.Array(FunnelStep),
    windowHours: Type.Integer(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Funnel' },
);
export type Funnel = Static<typeof Funnel>;

export const FunnelCreate = Type.Object(
  { name: Name, steps: Steps, windowHours: Type.Optional({ ...WindowHours, default: DEFAULT_WINDOW_HOURS }) },
  { additionalProperties: false, $id: 'FunnelCreate' },
);
export type FunnelCreate = Static<typeof FunnelCreate>;

export const FunnelUpdate = RoundTrip(
  Funnel,
  Type.Object(
    { name: Type.Optional(Name), steps: Type.Optional(Steps), windowHours: Type.Optional(WindowHours) },
    { additionalProperties: false, $id: 'FunnelUpdate' },
  ),
);
export type FunnelUpdate = Static<typeof FunnelUpdate>;

export const FunnelListQuery = ListQuery({});
export type FunnelListQuery = Static<typeof FunnelListQuery>;

export const FunnelParams = Type.Object({ funnel_id: FunnelId });

/** A page's audience, and every grouping of the site answer: the first step's visit's. */
export const FUNNEL_GROUP_BYS = ['audience', ...SITE_GROUP_BYS] as const;
export type FunnelGroupBy = (typeof FUNNEL_GROUP_BYS)[number];

const DateTime = (description: string) => Type.String({ format: 'date-time', description });
export const FunnelResultsQuery = Type.Object(
  {
    startDate: Type.Optional(DateTime('Steps at or after this instant; default: 30 days before endDate')),
    endDate: Type.Optional(DateTime('Steps before this instant; default: the next midnight, UTC')),
    groupBy: Type.Optional(StringEnum(FUNNEL_GROUP_BYS, { description: "Adds the steps per value of the first step's visit" })),
  },
  { additionalProperties: false },
);
export type FunnelResultsQuery = Static<typeof FunnelResultsQuery>;

const Count = Type.Integer({ minimum: 0, maximum: MAX_SAFE_INTEGER });
const Rate = Nullable(Type.Number({ minimum: 0, maximum: 1 }));
export const FunnelStepResult = Type.Object(
  {
    index: Type.Integer({ minimum: 0, description: 'From 0' }),
    name: Type.String(),
    visitors: Count,
    conversionFromPrevious: Rate,
    conversionFromStart: Rate,
    medianSecondsFromPrevious: Nullable(Type.Number({ minimum: 0, description: 'Null for the first step and for a step nobody reached' })),
  },
  { $id: 'FunnelStepResult' },
);
export type FunnelStepResult = Static<typeof FunnelStepResult>;

export const FunnelResults = Type.Object(
  {
    funnelId: Type.String(),
    startDate: Timestamp,
    endDate: Timestamp,
    windowHours: Type.Integer(),
    steps: Type.Array(FunnelStepResult),
    groups: Type.Optional(
      Type.Array(Type.Object({ key: Type.String(), label: Type.String(), steps: Type.Array(FunnelStepResult) }), {
        description: `With groupBy: the top ${MAX_GROUPS} by visitors at the first step, then by key`,
      }),
    ),
  },
  { $id: 'FunnelResults' },
);
export type FunnelResults = Static<typeof FunnelResults>;
