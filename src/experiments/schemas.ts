import { Type, type Static } from '@sinclair/typebox';
import { EXPERIMENT_ALLOCATIONS, EXPERIMENT_DECISIONS, EXPERIMENT_KINDS, EXPERIMENT_STATUSES } from '../db/enums.js';
import { RoundTrip } from '../http/round-trip.js';
import { ListQuery, Nullable, NullableTimestamp, StringEnum, Timestamp } from '../http/schemas.js';

const ArmKey = Type.String({ pattern: '^[a-z0-9-]{1,40}$', description: 'Unique within the experiment' });
const Weight = Type.Integer({ minimum: 1, maximum: 10000, description: "The arm's share is its weight over the sum of weights" });

export const ExperimentArm = Type.Object(
  {
    key: ArmKey,
    weight: Weight,
    versionId: Nullable(Type.String({ description: "A `versions` experiment: the audience's version this arm serves" })),
  },
  { $id: 'ExperimentArm' },
);

/** A stretch of fixed weights, and why it began. */
export const ExperimentPeriod = Type.Object(
  {
    number: Type.Integer({ minimum: 1 }),
    startedAt: Timestamp,
    weights: Type.Record(Type.String(), Type.Integer()),
    reason: StringEnum(['start', 'weights_changed', 'bandit'] as const),
  },
  { $id: 'ExperimentPeriod' },
);

export const Experiment = Type.Object(
  {
    experimentId: Type.String(),
    pageId: Type.String(),
    audienceId: Nullable(
      Type.String({
        description:
          "A `versions` experiment's audience, or a holdout's segment audience; null for a holdout over every audience with a person",
      }),
    ),
    name: Type.String(),
    kind: StringEnum(EXPERIMENT_KINDS),
    allocation: StringEnum(EXPERIMENT_ALLOCATIONS),
    minimumUnitsPerArm: Type.Integer({
      description: '`decision` stays `collecting` until every arm has this many units (`minimumVisitsPerArm` on input is its alias)',
    }),
    status: StringEnum(EXPERIMENT_STATUSES),
    arms: Type.Array(ExperimentArm),
    winner: Nullable(Type.String({ description: 'The arm chosen at the conclusion' })),
    startedAt: NullableTimestamp,
    concludedAt: NullableTimestamp,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Experiment' },
);
export type Experiment = Static<typeof Experiment>;

export const ExperimentCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    kind: StringEnum(EXPERIMENT_KINDS, {
      description:
        '`holdout`: arms `control` and `personalised`, over every audience with a person or, with `audienceId`, over one segment; `versions`: versions of one audience',
    }),
    arms: Type.Array(
      Type.Object(
        { key: ArmKey, weight: Weight, versionId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) },
        { additionalProperties: false },
      ),
      { minItems: 2, maxItems: 8 },
    ),
    audienceId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          'Required for `versions`. For a `holdout`, a segment audience of the page (one with rules): its visitors are split, and control sees the page as everyone sees it (the home audience, else the page); left out, the holdout covers every audience with a person',
      }),
    ),
    allocation: Type.Optional(StringEnum(EXPERIMENT_ALLOCATIONS, { default: 'fixed' })),
    // No schema default: it would hide whether the alias was sent alone.
    minimumUnitsPerArm: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1_000_000_000,
        description: '`decision` stays `collecting` until every arm has this many units; 100 when left out',
      }),
    ),
    minimumVisitsPerArm: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1_000_000_000,
        deprecated: true,
        description:
          'The former name of `minimumUnitsPerArm`, accepted as its alias (both given: they must be equal); answers name only the new one',
      }),
    ),
  },
  { additionalProperties: false, $id: 'ExperimentCreate' },
);
export type ExperimentCreate = Static<typeof ExperimentCreate>;

/** The name, and the weights (every arm, by key, as it is), while draft or running. */
export const ExperimentUpdate = RoundTrip(
  Experiment,
  Type.Object(
    {
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
      arms: Type.Optional(
        Type.Array(
          Type.Object(
            { key: ArmKey, weight: Weight, versionId: Type.Optional(Nullable(Type.String({ description: 'Read-only: as it is' }))) },
            { additionalProperties: false },
          ),
          { minItems: 2, maxItems: 8, description: 'Every arm, with the same keys; only weights change' },
        ),
      ),
      minimumVisitsPerArm: Type.Optional(
        Type.Integer({
          deprecated: true,
          readOnly: true,
          description: 'The former name of `minimumUnitsPerArm`: read-only, accepted when it equals it',
        }),
      ),
    },
    { additionalProperties: false, $id: 'ExperimentUpdate' },
  ),
);
export type ExperimentUpdate = Static<typeof ExperimentUpdate>;

export const ExperimentConclude = Type.Object(
  { winner: Type.String({ minLength: 1, maxLength: 40, description: 'The key of the arm that stays' }) },
  { additionalProperties: false, $id: 'ExperimentConclude' },
);

export const ExperimentParams = Type.Object({ page_id: Type.String(), experiment_id: Type.String() });
export const PageParams = Type.Object({ page_id: Type.String() });
export const ExperimentListQuery = ListQuery({});
export type ExperimentListQuery = Static<typeof ExperimentListQuery>;

const Interval = Type.Object({ estimate: Type.Number(), low: Type.Number(), high: Type.Number() });

export const ExperimentResults = Type.Object(
  {
    experimentId: Type.String(),
    status: StringEnum(EXPERIMENT_STATUSES),
    startedAt: NullableTimestamp,
    arms: Type.Array(
      Type.Object({
        key: Type.String(),
        weight: Type.Integer(),
        units: Type.Integer({ description: 'Distinct persons or daily visitor keys, each counted once, in its first arm' }),
        visits: Type.Integer(),
        conversions: Type.Integer({ description: 'Units with at least one converting visit' }),
        conversionRate: Type.Number(),
        lift: Nullable(Type.Object(Interval.properties, { description: 'Relative to the baseline, with its 95% anytime-valid interval' })),
        probabilityBest: Type.Number(),
        pValue: Nullable(
          Type.Number({
            description: 'Anytime-valid: the smallest over the looks so far (a decision never goes back); null for the baseline',
          }),
        ),
        current: Type.Object(
          {
            pValue: Nullable(Type.Number({ description: "This look's own p-value: it may be above the running minimum" })),
            lift: Nullable(Type.Object(Interval.properties)),
          },
          { description: "This look's figures, beside the ones that stay" },
        ),
      }),
    ),
    srm: Type.Object({ pValue: Nullable(Type.Number()), mismatch: Type.Boolean() }),
    decision: StringEnum(EXPERIMENT_DECISIONS, {
      description: 'Once `winner`, it stays `winner`, with the same arm, whatever later looks say',
    }),
    winner: Nullable(Type.String()),
    current: Type.Object(
      { decision: StringEnum(EXPERIMENT_DECISIONS), winner: Nullable(Type.String()) },
      { description: 'What this look alone says: it may differ from `decision` once a winner was found' },
    ),
    periods: Type.Array(ExperimentPeriod, {
      description: 'Each stretch of fixed weights: the start, a weight change, a bandit recomputation',
    }),
    firstWinnerAt: Nullable(Type.String({ description: 'When results first said `winner` (acting then keeps the error rate)' })),
    goalId: Type.Optional(Type.String({ description: 'With ?goalId: the goal counted as the conversion instead of the default' })),
  },
  { $id: 'ExperimentResults' },
);
export type ExperimentResults = Static<typeof ExperimentResults>;

export const ExperimentResultsQuery = Type.Object(
  {
    goalId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'A goal of the tenant: counted as the conversion instead of a form or pam.conversion()',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ExperimentResultsQuery = Static<typeof ExperimentResultsQuery>;
