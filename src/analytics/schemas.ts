import { Type, type Static } from '@sinclair/typebox';
import { ListQuery, MAX_SAFE_INTEGER, Nullable, StringEnum, Timestamp } from '../http/schemas.js';

export const INTERVALS = ['hour', 'day', 'week'] as const;
export type Interval = (typeof INTERVALS)[number];
export const GROUP_BYS = ['audience', 'utmSource', 'utmMedium', 'utmCampaign', 'arm'] as const;
export type GroupBy = (typeof GROUP_BYS)[number];
export const OVERVIEW_SORTS = ['visits', 'conversions'] as const;

/** The bounds of a query (docs/analytics.md). */
export const MAX_RANGE_DAYS = 400;
export const MAX_BUCKETS = 2000;
export const DEFAULT_RANGE_DAYS = 30;
export const MAX_GROUPS = 50;

const Count = Type.Integer({ minimum: 0, maximum: MAX_SAFE_INTEGER });
const Rate = Nullable(Type.Number({ minimum: 0, maximum: 1, description: 'Null without visits' }));
const Average = Nullable(Type.Number({ minimum: 0, description: 'Null without visits' }));

/** What a set of audience sessions adds up to (definitions in docs/analytics.md). */
export const MetricsProperties = {
  visits: Count,
  bounces: Count,
  bounceRate: Rate,
  timeSpentSeconds: Type.Number({ minimum: 0, description: 'Sum over the visits' }),
  avgTimeSpentSeconds: Average,
  avgMaxScrollDepthPercentage: Nullable(Type.Number({ minimum: 0, maximum: 100, description: 'Null without visits' })),
  clicks: Count,
  questionsAsked: Count,
  formSubmits: Count,
  conversions: Count,
  conversionRate: Rate,
};
export const Metrics = Type.Object(MetricsProperties, { $id: 'AnalyticsMetrics' });
export type Metrics = Static<typeof Metrics>;

const DateTime = (description: string) => Type.String({ format: 'date-time', description });

export const PageAnalyticsQuery = Type.Object(
  {
    startDate: Type.Optional(DateTime('Sessions started at or after this instant; default: 30 days before endDate')),
    endDate: Type.Optional(
      DateTime(
        'Sessions started before this instant; default: the end of the current bucket (for days and weeks, the next local midnight)',
      ),
    ),
    interval: Type.Optional(StringEnum(INTERVALS, { default: 'day', description: `At most ${MAX_BUCKETS} buckets in the range` })),
    timeZone: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        default: 'UTC',
        description: 'IANA time-zone name: buckets start at its local hours and midnights',
      }),
    ),
    audienceId: Type.Optional(Type.String({ description: 'Only this audience of the page' })),
    groupBy: Type.Optional(StringEnum(GROUP_BYS, { description: `Adds the top ${MAX_GROUPS} groups by visits` })),
  },
  { additionalProperties: false },
);
export type PageAnalyticsQuery = Static<typeof PageAnalyticsQuery>;

export const SeriesPoint = Type.Object({ start: Timestamp, ...MetricsProperties }, { $id: 'AnalyticsBucket' });
export const Group = Type.Object(
  {
    key: Type.String({ description: 'The audience id, or the UTM value ("" for sessions without one)' }),
    label: Type.String({ description: "The audience's effectiveName; for UTM groups, the value itself" }),
    ...MetricsProperties,
  },
  { $id: 'AnalyticsGroup' },
);

export const PageAnalytics = Type.Object(
  {
    pageId: Type.String(),
    startDate: Timestamp,
    endDate: Timestamp,
    interval: StringEnum(INTERVALS),
    timeZone: Type.String(),
    totals: Metrics,
    series: Type.Array(SeriesPoint, { description: 'Every bucket of the range, in order, zero-filled' }),
    groups: Type.Optional(Type.Array(Group, { description: `With groupBy: the top ${MAX_GROUPS} by visits, then by key` })),
  },
  { $id: 'PageAnalytics' },
);
export type PageAnalytics = Static<typeof PageAnalytics>;

export const PagesAnalyticsQuery = ListQuery({
  startDate: Type.Optional(DateTime('Sessions started at or after this instant; default: 30 days before endDate')),
  endDate: Type.Optional(DateTime('Sessions started before this instant; default: the next midnight, UTC')),
  sort: Type.Optional(StringEnum(OVERVIEW_SORTS, { default: 'visits', description: 'Descending; ties by pageId' })),
});
export type PagesAnalyticsQuery = Static<typeof PagesAnalyticsQuery>;

export const PageTotals = Type.Object(
  {
    pageId: Type.String(),
    pageName: Type.String(),
    ...MetricsProperties,
  },
  { $id: 'PageTotals' },
);
export type PageTotals = Static<typeof PageTotals>;
