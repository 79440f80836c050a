import { Type, type Static } from '@sinclair/typebox';
import { ListQuery, Nullable, Timestamp } from '../http/schemas.js';

/**
 * One lead form submitted on a served page, with the person it is (the session's person). Page and
 * audience names are null once they are gone; the source is the visit's session's channel, referrer and UTM values.
 */
export const Lead = Type.Object(
  {
    leadId: Type.String({ description: 'The form submission id (`formSubmissionId` of `form.submitted`)' }),
    submittedAt: Timestamp,
    personId: Type.String(),
    personName: Type.String(),
    personEmail: Nullable(Type.String()),
    personPhoneNumber: Nullable(Type.String()),
    pageId: Type.String(),
    pageName: Nullable(Type.String()),
    audienceId: Type.String(),
    audienceName: Nullable(Type.String()),
    actionId: Type.String(),
    audienceSessionId: Type.String(),
    channel: Type.String({ description: "The visit's channel as the collector classed it ('' once its session is gone)" }),
    referrerHost: Type.String({ description: "The referring site's host; '' when direct, internal or unknown" }),
    utmSource: Type.String(),
    utmMedium: Type.String(),
    utmCampaign: Type.String(),
    utmTerm: Type.String(),
    utmContent: Type.String(),
  },
  { $id: 'Lead' },
);
export type Lead = Static<typeof Lead>;

const DateTime = (description: string) => Type.String({ format: 'date-time', description });

export const LeadListQuery = ListQuery({
  pageId: Type.Optional(Type.String({ minLength: 1, description: 'Only leads of this page' })),
  startDate: Type.Optional(DateTime('Leads submitted at or after this instant')),
  endDate: Type.Optional(DateTime('Leads submitted before this instant')),
});
export type LeadListQuery = Static<typeof LeadListQuery>;
