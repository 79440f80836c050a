import { Type, type Static } from '@sinclair/typebox';
import { MAX_GROUPS } from '../audiences/index.js';
import { MAX_SAFE_INTEGER, Nullable, StringEnum, Timestamp } from '../http/schemas.js';

export const PIPELINE_MODELS = ['any', 'first', 'last', 'linear', 'time_decay', 'position'] as const;
export type PipelineModel = (typeof PIPELINE_MODELS)[number];
export const PIPELINE_GROUP_BYS = ['page', 'audience', 'arm', 'segment', 'channelGroup', 'utmSource', 'utmCampaign', 'experience'] as const;
export type PipelineGroupBy = (typeof PIPELINE_GROUP_BYS)[number];
export const MAX_WINDOW_DAYS = 365;
export const DEFAULT_WINDOW_DAYS = 90;
export const MIN_HALF_LIFE_DAYS = 1;
export const MAX_HALF_LIFE_DAYS = 365;

const DateTime = (description: string) => Type.String({ format: 'date-time', description });

export const PipelineQuery = Type.Object(
  {
    startDate: Type.Optional(DateTime('Deals created (their createdAt) at or after this instant; default 30 days before endDate')),
    endDate: Type.Optional(DateTime('Deals created before this instant; default the next UTC midnight. At most 400 days after startDate')),
    model: Type.Optional(
      StringEnum(PIPELINE_MODELS, {
        default: 'any',
        description:
          "any: every touched group gets the deal; first / last: the earliest or latest touch's group; linear: each of n touches 1/n; time_decay: 2^(−age/halfLife), normalised; position: first and last 0.4 each, the ones between 0.2 (1 touch: 1; 2: 0.5 each)",
      }),
    ),
    halfLifeDays: Type.Optional(
      Type.Number({
        minimum: MIN_HALF_LIFE_DAYS,
        maximum: MAX_HALF_LIFE_DAYS,
        description: 'The half-life of a touch with model=time_decay (refused with any other model); default windowDays / 4',
      }),
    ),
    windowDays: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_WINDOW_DAYS,
        default: DEFAULT_WINDOW_DAYS,
        description: "A session touches a deal when it started at most this many days before the deal's createdAt",
      }),
    ),
    groupBy: Type.Optional(
      StringEnum(PIPELINE_GROUP_BYS, {
        default: 'page',
        description:
          "What a touch credits: its page, audience, experiment arm, segment, or the session's channel group, UTM source or UTM campaign; experience: the customer's own site's experiences, by their views identified as a person of the deal's account (pam.identify)",
      }),
    ),
    experimentId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'The experiment whose arms groupBy=arm compares (required for arm, refused otherwise)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type PipelineQuery = Static<typeof PipelineQuery>;

const Count = Type.Integer({ minimum: 0, maximum: MAX_SAFE_INTEGER });
const Amount = Type.Number({ minimum: 0, description: 'Sum of the amounts, in the currency' });

export const CurrencySums = Type.Object(
  { currency: Type.String(), deals: Count, amount: Amount, wonDeals: Count, wonAmount: Amount },
  { $id: 'PipelineCurrencySums' },
);
export type CurrencySums = Static<typeof CurrencySums>;

const sumsFields = {
  deals: Type.Integer({ minimum: 0, maximum: MAX_SAFE_INTEGER, description: 'Deals, each counted once' }),
  amount: Nullable(Type.Number({ minimum: 0, description: 'Null when the deals are in several currencies: see byCurrency' })),
  wonDeals: Count,
  wonAmount: Nullable(Type.Number({ minimum: 0, description: 'Null when the deals are in several currencies: see byCurrency' })),
  byCurrency: Type.Array(CurrencySums, { description: 'The same sums per currency, by currency code' }),
};

export const PipelineTotals = Type.Object(sumsFields, { $id: 'PipelineTotals' });
export type PipelineTotals = Static<typeof PipelineTotals>;

const Attributed = Type.Number({ minimum: 0, description: "The deals' amounts times their shares, to the cent" });
const attributedFields = {
  attributedDeals: Type.Number({ minimum: 0, description: "The model's shares of deals, to 4 decimals" }),
  attributedAmount: Attributed,
  attributedWonAmount: Attributed,
};

export const GroupCurrencySums = Type.Object(
  {
    currency: Type.String(),
    deals: Count,
    amount: Amount,
    wonDeals: Count,
    wonAmount: Amount,
    ...attributedFields,
  },
  { $id: 'PipelineGroupCurrencySums' },
);
export type GroupCurrencySums = Static<typeof GroupCurrencySums>;

export const PipelineGroup = Type.Object(
  {
    key: Type.String({
      description:
        "The page id, audience id, arm key, channel group, UTM source or campaign ('' when the session had none), or experience id",
    }),
    label: Type.String({ description: "The page's, audience's or experience's name; the key otherwise, '(not set)' for ''" }),
    ...sumsFields,
    attributedDeals: attributedFields.attributedDeals,
    attributedAmount: Nullable(Type.Number({ minimum: 0, description: 'Null when the deals are in several currencies: see byCurrency' })),
    attributedWonAmount: Nullable(
      Type.Number({ minimum: 0, description: 'Null when the deals are in several currencies: see byCurrency' }),
    ),
    byCurrency: Type.Array(GroupCurrencySums, { description: 'The same sums per currency, by currency code' }),
  },
  { $id: 'PipelineGroup' },
);
export type PipelineGroup = Static<typeof PipelineGroup>;

export const Pipeline = Type.Object(
  {
    startDate: Timestamp,
    endDate: Timestamp,
    model: StringEnum(PIPELINE_MODELS),
    windowDays: Type.Integer(),
    halfLifeDays: Nullable(Type.Number({ description: 'The half-life time_decay used; null with any other model' })),
    groupBy: StringEnum(PIPELINE_GROUP_BYS),
    experimentId: Nullable(Type.String()),
    currency: Nullable(Type.String({ description: 'The one currency of the influenced deals; null when none or several' })),
    totals: PipelineTotals,
    groups: Type.Array(PipelineGroup, {
      maxItems: MAX_GROUPS,
      description: `The top ${MAX_GROUPS} groups: most deals first (most attributedDeals with linear, time_decay and position), then most won deals, then by key`,
    }),
  },
  { $id: 'Pipeline' },
);
export type Pipeline = Static<typeof Pipeline>;
