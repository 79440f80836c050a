import { Type, type Static } from '@sinclair/typebox';
import { ListQuery, MAX_SAFE_INTEGER, Nullable, StringEnum, Timestamp } from '../http/schemas.js';
import { CHANNEL_GROUPS, CHANNELS } from '../db/enums.js';

export const AudienceSession = Type.Object(
  {
    audienceSessionId: Type.String(),
    analyticsSessionId: Type.String(),
    audienceId: Type.String({
      description: "The audience the visit was shown; the page's own `pageId` for the page itself (a page served without a home audience)",
    }),
    pageId: Type.String(),
    pageTitle: Type.String(),
    pageUrl: Type.String(),
    sessionStartedAt: Timestamp,
    sessionEndedAt: Timestamp,
    timeSpentSeconds: Type.Number(),
    maxScrollDepthPercentage: Type.Number(),
    totalClicksCount: Type.Number(),
    questionsAskedCount: Type.Number(),
    isBounce: Type.Boolean(),
    hasFormSubmit: Type.Boolean(),
    hasConversion: Type.Boolean(),
    formSubmissionId: Type.String(),
    formSubmissionIdentifier: Type.String(),
    formSubmissionEmail: Type.String(),
    formSubmissionPhone: Type.String(),
    utmCampaign: Type.String(),
    utmContent: Type.String(),
    utmMedium: Type.String(),
    utmSource: Type.String(),
    utmTerm: Type.String(),
    experimentId: Nullable(Type.String({ description: 'The experiment the visit was served in (extension); null outside experiments' })),
    arm: Nullable(Type.String({ description: "The experiment's arm the visit was served (extension); null outside experiments" })),
    referrerHost: Type.String({ description: "The referring host (extension); '' when direct, from the same host, or not collected" }),
    channel: StringEnum(CHANNELS, { description: 'Where the visit came from (extension); direct when not collected' }),
    channelGroup: StringEnum(CHANNEL_GROUPS, {
      description:
        "Extension. Google Analytics 4's default channel group, by GA4's rules, from the referrer and the UTM values (docs/analytics.md); Direct when neither says anything",
    }),
    deviceType: Type.String({ description: "desktop, mobile or tablet (extension); '' when not collected" }),
    browser: Type.String({ description: "The browser's family (extension); '' when unknown" }),
    os: Type.String({ description: "The operating system's family (extension); '' when unknown" }),
    country: Type.String({ description: "ISO 3166-1 alpha-2 of the visitor's address (extension); '' when unknown" }),
  },
  { $id: 'AudienceSession' },
);
export type AudienceSession = Static<typeof AudienceSession>;

const DateTime = Type.String({ format: 'date-time', description: 'RFC 3339 date-time with a time zone' });
const Count = Type.Integer({ minimum: 0, maximum: MAX_SAFE_INTEGER });

/** One recorded visit. `pageId` and `pageTitle` come from the page. */
export const SessionCreate = Type.Object(
  {
    audienceId: Type.String({ description: 'An audience of this page' }),
    analyticsSessionId: Type.String({ minLength: 1 }),
    pageUrl: Type.String({ minLength: 1 }),
    sessionStartedAt: DateTime,
    sessionEndedAt: Type.String({ format: 'date-time', description: 'Not before sessionStartedAt' }),
    timeSpentSeconds: Type.Optional(Type.Number({ minimum: 0, description: 'Defaults to the seconds between start and end' })),
    maxScrollDepthPercentage: Type.Optional(Type.Number({ minimum: 0, maximum: 100, default: 0 })),
    totalClicksCount: Type.Optional(Count),
    questionsAskedCount: Type.Optional(Count),
    isBounce: Type.Optional(Type.Boolean()),
    hasFormSubmit: Type.Optional(Type.Boolean()),
    hasConversion: Type.Optional(Type.Boolean()),
    formSubmissionId: Type.Optional(Type.String()),
    formSubmissionIdentifier: Type.Optional(Type.String()),
    formSubmissionEmail: Type.Optional(Type.String()),
    formSubmissionPhone: Type.Optional(Type.String()),
    utmCampaign: Type.Optional(Type.String()),
    utmContent: Type.Optional(Type.String()),
    utmMedium: Type.Optional(Type.String()),
    utmSource: Type.Optional(Type.String()),
    utmTerm: Type.Optional(Type.String()),
  },
  { additionalProperties: false, $id: 'AudienceSessionCreate' },
);
export type SessionCreate = Static<typeof SessionCreate>;

export const SessionListQuery = ListQuery({
  startDate: Type.Optional(Type.String({ format: 'date-time', description: 'Sessions started at or after this instant' })),
  endDate: Type.Optional(Type.String({ format: 'date-time', description: 'Sessions started before this instant' })),
  audienceId: Type.Optional(Type.String({ description: "Only this audience of the page (the page's own id: the page itself)" })),
});
export type SessionListQuery = Static<typeof SessionListQuery>;

const Id = Type.String();

/** `visit.started`: the first report of a visit on a person's audience (docs/webhooks.md). */
export const VisitStarted = Type.Object(
  {
    audienceSessionId: Id,
    analyticsSessionId: Id,
    personId: Id,
    accountId: Nullable(Type.String({ description: "The account of the person's domain, when there is one" })),
    pageId: Id,
    audienceId: Id,
    path: Type.String({ description: 'The path the visit was served at' }),
    channel: StringEnum(CHANNELS),
    sessionStartedAt: Timestamp,
  },
  { $id: 'VisitStarted' },
);
export type VisitStarted = Static<typeof VisitStarted>;

/** `session.ended`: a collected visit's summary, once it fell idle or its page was left (docs/webhooks.md). */
export const SessionEnded = Type.Object(
  {
    audienceSessionId: Id,
    analyticsSessionId: Id,
    personId: Nullable(Id),
    accountId: Nullable(Id),
    pageId: Id,
    audienceId: Id,
    pageUrl: Type.String(),
    channel: StringEnum(CHANNELS),
    country: Type.String(),
    sessionStartedAt: Timestamp,
    sessionEndedAt: Timestamp,
    timeSpentSeconds: Type.Number(),
    maxScrollDepthPercentage: Type.Number(),
    totalClicksCount: Count,
    questionsAskedCount: Count,
    conversions: Type.Integer({ minimum: 0, maximum: 1, description: 'Whether the visit converted: a session records it once' }),
    goalsReached: Type.Array(Type.Object({ goalId: Id, name: Type.String() }), {
      description: 'The goals the visit reached (empty until goals exist)',
    }),
  },
  { $id: 'SessionEnded' },
);
export type SessionEnded = Static<typeof SessionEnded>;
