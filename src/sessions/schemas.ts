import { Type, type Static } from '@sinclair/typebox';
import { ListQuery, MAX_SAFE_INTEGER, Nullable, Timestamp } from '../http/schemas.js';

export const AudienceSession = Type.Object(
  {
    audienceSessionId: Type.String(),
    analyticsSessionId: Type.String(),
    audienceId: Type.String(),
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
  audienceId: Type.Optional(Type.String({ description: 'Only this audience of the page' })),
});
export type SessionListQuery = Static<typeof SessionListQuery>;
