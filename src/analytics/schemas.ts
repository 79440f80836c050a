import { Type, type Static } from '@sinclair/typebox';
import { ListQuery, MAX_SAFE_INTEGER, Nullable, StringEnum, Timestamp } from '../http/schemas.js';
import { MAX_GROUPS, AUDIENCE_KINDS } from '../audiences/index.js';
import { CHANNEL_GROUPS, CHANNELS } from '../db/enums.js';

export const INTERVALS = ['hour', 'day', 'week'] as const;
export type Interval = (typeof INTERVALS)[number];
export const GROUP_BYS = [
  'audience',
  'utmSource',
  'utmMedium',
  'utmCampaign',
  'arm',
  'channel',
  'channelGroup',
  'referrerHost',
  'deviceType',
  'browser',
  'os',
  'country',
] as const;
/** The groupings of the site-wide answer: a page's audiences and arms are the page's own. */
export const SITE_GROUP_BYS = [
  'utmSource',
  'utmMedium',
  'utmCampaign',
  'channel',
  'channelGroup',
  'referrerHost',
  'deviceType',
  'browser',
  'os',
  'country',
] as const;
export const COMPARES = ['previous_period'] as const;
export type GroupBy = (typeof GROUP_BYS)[number];
export const OVERVIEW_SORTS = ['visits', 'conversions'] as const;

/** The bounds of a query (docs/analytics.md). */
export const MAX_RANGE_DAYS = 400;
export const MAX_BUCKETS = 2000;
export const DEFAULT_RANGE_DAYS = 30;

const Count = Type.Integer({ minimum: 0, maximum: MAX_SAFE_INTEGER });
const Rate = Nullable(Type.Number({ minimum: 0, maximum: 1, description: 'Null without visits' }));
const Average = Nullable(Type.Number({ minimum: 0, description: 'Null without visits' }));

/** What a set of audience sessions adds up to (definitions in docs/analytics.md). */
export const MetricsProperties = {
  visits: Count,
  visitors: Type.Integer({
    minimum: 0,
    maximum: MAX_SAFE_INTEGER,
    description: 'Distinct visitors within each UTC day, summed over the days (docs/analytics.md)',
  }),
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

/** A goal's numbers over a set of visits (docs/analytics.md, "Goals"). */
export const GoalMetrics = Type.Object(
  {
    goalId: Type.String(),
    name: Type.String(),
    completions: Type.Integer({ minimum: 0, maximum: MAX_SAFE_INTEGER, description: 'Times it happened (a path: visits)' }),
    uniqueCompletions: Type.Integer({ minimum: 0, maximum: MAX_SAFE_INTEGER, description: 'Distinct visitors it happened for' }),
    value: Type.Number({ minimum: 0, description: 'The sum of the values tracked with it (event goals; 0 for the others)' }),
    currency: Nullable(Type.String({ description: "The goal's currency, if it has one" })),
    conversionRate: Rate,
  },
  { $id: 'GoalMetrics' },
);
export type GoalMetrics = Static<typeof GoalMetrics>;
const Goals = Type.Array(GoalMetrics, { description: 'Every goal of the tenant, oldest first, over the same visits' });

const Change = Nullable(Type.Number({ description: '(current - previous) / previous; null where the previous value is 0 or null' }));
export const MetricsChange = Type.Object(
  Object.fromEntries(Object.keys(MetricsProperties).map((k) => [k, Change])) as Record<keyof typeof MetricsProperties, typeof Change>,
  { $id: 'AnalyticsChange' },
);
export type MetricsChange = Static<typeof MetricsChange>;

const Compare = Type.Optional(
  StringEnum(COMPARES, {
    description: 'previous_period adds `previous` (the totals of the range of equal length just before) and `change`',
  }),
);
const Previous = Type.Object(
  { startDate: Timestamp, endDate: Timestamp, totals: Metrics },
  { $id: 'AnalyticsPrevious', description: 'With compare=previous_period' },
);

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
    compare: Compare,
  },
  { additionalProperties: false },
);
export type PageAnalyticsQuery = Static<typeof PageAnalyticsQuery>;

export const SiteAnalyticsQuery = Type.Object(
  {
    ...Type.Omit(PageAnalyticsQuery, ['audienceId', 'groupBy']).properties,
    groupBy: Type.Optional(StringEnum(SITE_GROUP_BYS, { description: `Adds the top ${MAX_GROUPS} groups by visits` })),
  },
  { additionalProperties: false },
);
export type SiteAnalyticsQuery = Static<typeof SiteAnalyticsQuery>;

export const SeriesPoint = Type.Object({ start: Timestamp, ...MetricsProperties }, { $id: 'AnalyticsBucket' });
export const Group = Type.Object(
  {
    key: Type.String({ description: 'The audience id, or the value of the grouping ("" for sessions without one)' }),
    label: Type.String({ description: "The audience's effectiveName; for other groups, the value itself" }),
    ...MetricsProperties,
  },
  { $id: 'AnalyticsGroup' },
);

const Share = Nullable(Type.Number({ minimum: 0, maximum: 1, description: 'Null without visits' }));
const VitalSummary = (name: string, unit: string, good: string, poor: string) =>
  Type.Object(
    {
      p75: Nullable(
        Type.Number({ minimum: 0, description: `${unit}; the upper bound of the histogram bucket holding it (docs/analytics.md)` }),
      ),
      visits: Type.Integer({ minimum: 0, maximum: MAX_SAFE_INTEGER, description: 'Visits that reported it' }),
      good: Share,
      needsImprovement: Share,
      poor: Share,
    },
    { description: `${name}: good at most ${good}, poor over ${poor} (Google's thresholds)` },
  );
/** Field web vitals of the visits (issue 49), by UTC day: the range's UTC days. */
export const WebVitals = Type.Object(
  {
    lcp: VitalSummary('Largest Contentful Paint', 'milliseconds', '2,500 ms', '4,000 ms'),
    inp: VitalSummary('Interaction to Next Paint', 'milliseconds', '200 ms', '500 ms'),
    cls: VitalSummary('Cumulative Layout Shift', 'unitless', '0.1', '0.25'),
    fcp: VitalSummary('First Contentful Paint', 'milliseconds', '1,800 ms', '3,000 ms'),
    ttfb: VitalSummary('Time to First Byte', 'milliseconds', '800 ms', '1,800 ms'),
  },
  { $id: 'WebVitals', description: "The visits' field web vitals, kept per page and UTC day: the UTC days the range touches" },
);
export type WebVitals = Static<typeof WebVitals>;

const AnalyticsProperties = {
  startDate: Timestamp,
  endDate: Timestamp,
  interval: StringEnum(INTERVALS),
  timeZone: Type.String(),
  totals: Metrics,
  series: Type.Array(SeriesPoint, { description: 'Every bucket of the range, in order, zero-filled' }),
  groups: Type.Optional(Type.Array(Group, { description: `With groupBy: the top ${MAX_GROUPS} by visits, then by key` })),
  previous: Type.Optional(Previous),
  change: Type.Optional(MetricsChange),
  goals: Goals,
  averageScrollDepth: Nullable(
    Type.Number({ minimum: 0, maximum: 100, description: "The mean of each visit's deepest scroll, in percent; null without visits" }),
  ),
  webVitals: WebVitals,
};

export const PageAnalytics = Type.Object({ pageId: Type.String(), ...AnalyticsProperties }, { $id: 'PageAnalytics' });
export type PageAnalytics = Static<typeof PageAnalytics>;

export const SiteAnalytics = Type.Object(AnalyticsProperties, { $id: 'SiteAnalytics' });
export type SiteAnalytics = Static<typeof SiteAnalytics>;

export const PagesAnalyticsQuery = ListQuery({
  startDate: Type.Optional(DateTime('Sessions started at or after this instant; default: 30 days before endDate')),
  endDate: Type.Optional(DateTime('Sessions started before this instant; default: the next midnight, UTC')),
  sort: Type.Optional(StringEnum(OVERVIEW_SORTS, { default: 'visits', description: 'Descending; ties by pageId' })),
  groupBy: Type.Optional(StringEnum(SITE_GROUP_BYS, { description: `Adds each page's top ${MAX_GROUPS} groups by visits` })),
  compare: Compare,
});
export type PagesAnalyticsQuery = Static<typeof PagesAnalyticsQuery>;

export const PageTotals = Type.Object(
  {
    pageId: Type.String(),
    pageName: Type.String(),
    ...MetricsProperties,
    goals: Goals,
    groups: Type.Optional(Type.Array(Group, { description: `With groupBy: the page's top ${MAX_GROUPS} by visits, then by key` })),
    previous: Type.Optional(Type.Object({ totals: Metrics }, { description: 'With compare=previous_period' })),
    change: Type.Optional(MetricsChange),
  },
  { $id: 'PageTotals' },
);
export type PageTotals = Static<typeof PageTotals>;

/** How far back a visit's last report makes it active (`GET /v0/analytics/realtime`). */
export const REALTIME_WINDOW_SECONDS = 300;
/** The visits listed at most; `count` counts them all. */
export const REALTIME_MAX_VISITS = 100;

export const RealtimeVisit = Type.Object(
  {
    audienceSessionId: Type.String(),
    pageId: Type.String(),
    pageName: Type.String({ description: "The page's name" }),
    audienceId: Type.String(),
    audienceName: Type.String({ description: "Extension. The audience's name (for a segment, the segment the visit matched)" }),
    audienceKind: StringEnum([...AUDIENCE_KINDS, 'other'] as const, {
      description:
        "Extension. `segment`: the visit was matched to a segment by its rules; `person`: a person's own link; `home`: the home audience; `other`: any other audience",
    }),
    personId: Nullable(Type.String({ description: 'The person the audience was made for, when there is one' })),
    personName: Nullable(Type.String({ description: "That person's name" })),
    accountId: Nullable(Type.String({ description: "The account of the person's domain, when there is one" })),
    accountName: Nullable(Type.String({ description: "That account's name" })),
    path: Type.String(),
    channel: StringEnum(CHANNELS),
    channelGroup: StringEnum(CHANNEL_GROUPS, { description: "Extension. GA4's default channel group (docs/analytics.md)" }),
    country: Type.String({ description: "ISO 3166-1 alpha-2; '' when unknown" }),
    sessionStartedAt: Timestamp,
    lastSeenAt: Timestamp,
  },
  { $id: 'RealtimeVisit' },
);
export type RealtimeVisit = Static<typeof RealtimeVisit>;

export const Realtime = Type.Object(
  {
    since: Timestamp,
    count: Type.Integer({
      minimum: 0,
      description: `Visits with a report in the last ${REALTIME_WINDOW_SECONDS / 60} minutes that have not ended`,
    }),
    visits: Type.Array(RealtimeVisit, { description: `The ${REALTIME_MAX_VISITS} most recently seen, newest first` }),
  },
  { $id: 'AnalyticsRealtime' },
);
export type Realtime = Static<typeof Realtime>;
