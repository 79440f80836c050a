import { Type, type Static } from '@sinclair/typebox';
import { MAX_GROUPS } from '../audiences/groups.js';
import { MAX_SAFE_INTEGER, Nullable, StringEnum, Timestamp } from '../http/schemas.js';

export const PIPELINE_MODELS = ['any', 'first', 'last'] as const;
export type PipelineModel = (typeof PIPELINE_MODELS)[number];
export const PIPELINE_GROUP_BYS = ['page', 'audience', 'arm', 'segment'] as const;
export type PipelineGroupBy = (typeof PIPELINE_GROUP_BYS)[number];
export const MAX_WINDOW_DAYS = 365;
export const DEFAULT_WINDOW_DAYS = 90;

const DateTime = (description: string) => Type.String({ format: 'date-time', description });

export const PipelineQuery = Type.Object(
  {
    startDate: Type.Optional(DateTime('Deals created (their createdAt) at or after this instant; default 30 days before endDate')),
    endDate: Type.Optional(DateTime('Deals created before this instant; default the next UTC midnight. At most 400 days after startDate')),
    model: Type.Optional(
      StringEnum(PIPELINE_MODELS, {
        default: 'any',
        description: "any: every touched group gets the deal; first / last: the earliest or latest touch's group",
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
    groupBy: Type.Optional(StringEnum(PIPELINE_GROUP_BYS, { default: 'page', description: 'What a touch credits' })),
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

export const PipelineGroup = Type.Object(
  {
    key: Type.String({ description: 'The page id, audience id or arm key' }),
    label: Type.String({ description: "The page's or audience's name, or the arm key" }),
    ...sumsFields,
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
    groupBy: StringEnum(PIPELINE_GROUP_BYS),
    experimentId: Nullable(Type.String()),
    currency: Nullable(Type.String({ description: 'The one currency of the influenced deals; null when none or several' })),
    totals: PipelineTotals,
    groups: Type.Array(PipelineGroup, {
      maxItems: MAX_GROUPS,
      description: `The top ${MAX_GROUPS} groups: most deals first, then most won deals, then by key`,
    }),
  },
  { $id: 'Pipeline' },
);
export type Pipeline = Static<typeof Pipeline>;
