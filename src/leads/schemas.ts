import { Type, type Static } from '@sinclair/typebox';
import { ListQuery, Nullable, StringEnum, Timestamp } from '../http/schemas.js';

/**
 * One lead form submitted on a served page, with the person who filled it (issue 36: found by the
 * typed email, else the link's person when they have no email yet, else made) and what they typed.
 * `personName`, `personEmail` and `personPhoneNumber` are the person's fields as they are now.
 * Page and audience names are null once they are gone; the source is the visit's session's channel, channel group, referrer and UTM values.
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
    channelGroup: Type.String({
      description: "The visit's GA4 default channel group, as its session has it (`channelGroup`; '' once its session is gone)",
    }),
    referrerHost: Type.String({ description: "The referring site's host; '' when direct, internal or unknown" }),
    utmSource: Type.String(),
    utmMedium: Type.String(),
    utmCampaign: Type.String(),
    utmTerm: Type.String(),
    utmContent: Type.String(),
    viaPersonId: Nullable(
      Type.String({
        description:
          "The person whose link the form was on, when the lead is someone else's (Bob on Jane's forwarded link); null otherwise",
      }),
    ),
    submittedName: Type.String({ description: 'The name as the visitor typed it: a claim, never written to an existing person' }),
    submittedEmail: Type.String({ description: 'The email as the visitor typed it' }),
    submittedPhone: Type.String({ description: "The phone as the visitor typed it (E.164), '' when left empty" }),
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

/**
 * `form.submitted`'s `data` (docs/webhooks.md): the one statement of its fields, which the form's
 * transaction is typed by and tests check delivered events against.
 */
export const FormSubmittedData = Type.Object(
  {
    formSubmissionId: Type.String({ description: "The lead's id (`leadId` in GET /v0/leads)" }),
    formSubmissionIdentifier: Type.String(),
    pageId: Type.String(),
    audienceId: Type.String({ description: 'The audience that was served: the session stays on it' }),
    actionId: Type.String(),
    audienceSessionId: Type.String(),
    analyticsSessionId: Type.String(),
    name: Type.String({ description: 'As typed: unverified' }),
    email: Type.String({ description: 'As typed: unverified' }),
    phone: Type.String({ description: "As typed (E.164), '' when left empty: unverified" }),
    personId: Type.String({
      description: "Who filled the form (the person with that email, else the link's person without one, else a new person)",
    }),
    viaPersonId: Nullable(Type.String({ description: "The link's person when the lead is someone else's; null otherwise" })),
    submittedAt: Timestamp,
  },
  { additionalProperties: false },
);
export type FormSubmittedData = Static<typeof FormSubmittedData>;

/** The company a lead's email domain names (issue 39): what the provider said; `{domain}` alone without one. */
const EnrichedCompany = Type.Object(
  {
    domain: Type.String({ description: "The lead's email domain, lowercased: the account's domain" }),
    name: Type.Optional(Nullable(Type.String())),
    industry: Type.Optional(Nullable(Type.String())),
    employees: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
    country: Type.Optional(Nullable(Type.String({ description: 'ISO 3166-1 alpha-2, uppercased' }))),
  },
  { additionalProperties: false },
);

/** `form.enriched`'s `data` (docs/webhooks.md, docs/enrichment.md). */
export const FormEnrichedData = Type.Object(
  {
    formSubmissionId: Type.String(),
    personId: Type.String(),
    accountId: Type.String({ description: "The tenant's account of the email domain, found or made" }),
    company: EnrichedCompany,
  },
  { additionalProperties: false },
);
export type FormEnrichedData = Static<typeof FormEnrichedData>;

export const ENRICHMENT_FAILURES = ['free_email_domain', 'provider_unknown', 'provider_error', 'no_provider', 'not_shared'] as const;

/** `form.enrichment_failed`'s `data`. */
export const FormEnrichmentFailedData = Type.Object(
  {
    formSubmissionId: Type.String(),
    personId: Type.String(),
    reason: StringEnum(ENRICHMENT_FAILURES),
  },
  { additionalProperties: false },
);
export type FormEnrichmentFailedData = Static<typeof FormEnrichmentFailedData>;
