import { type Static, Type } from '@sinclair/typebox';
import { MAX_DECISION_TOKEN_LENGTH } from '../decision-token.js';
import { MAX_SAFE_INTEGER, Nullable, StringEnum, Timestamp } from '../../http/schemas.js';

/** Counts the script keeps per page view at most; a larger one is bad input. */
export const MAX_REPORTED_COUNT = 10_000;
const Count = Type.Integer({ minimum: 0, maximum: MAX_REPORTED_COUNT });

/** One report of the site script (`pamReport`, src/onsite/snippet/report-part.ts): its page view's totals so far. */
export const ExperienceReport = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: MAX_DECISION_TOKEN_LENGTH }),
    /** Clicks on each applied experience's changed elements, by experience id. */
    clicks: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 64 }), Count, { maxProperties: 50 })),
    /** `pam.conversion()` calls so far. */
    conversions: Type.Optional(Count),
    /** `pam.identify(email)`: who the site says the visitor is. */
    identify: Type.Optional(Type.String({ minLength: 3, maxLength: 254 })),
  },
  { additionalProperties: false },
);
export type ExperienceReport = Static<typeof ExperienceReport>;

const DateTime = (description: string) => Type.String({ format: 'date-time', description });

export const ExperienceParams = Type.Object({ experience_id: Type.String({ minLength: 1, maxLength: 64 }) });
export type ExperienceParams = Static<typeof ExperienceParams>;

export const ExperienceAnalyticsQuery = Type.Object(
  {
    startDate: Type.Optional(DateTime('Views of the UTC days that end after this instant; default: 30 days before endDate')),
    endDate: Type.Optional(DateTime('Views of the UTC days that start before this instant; default: the next UTC midnight')),
  },
  { additionalProperties: false },
);
export type ExperienceAnalyticsQuery = Static<typeof ExperienceAnalyticsQuery>;

const Int = (description: string) => Type.Integer({ minimum: 0, maximum: MAX_SAFE_INTEGER, description });
const ARMS = ['personalised', 'holdout'] as const;

export const ExperienceArmResult = Type.Object(
  {
    arm: StringEnum(ARMS),
    views: Int('Page views that applied (or held out) the experience'),
    visitors: Int('Distinct daily visitors, summed over days'),
    conversions: Int('Visitors who converted the day they viewed, each once a day'),
    conversionRate: Type.Number({ minimum: 0, maximum: 1, description: 'conversions / visitors; 0 with no visitor' }),
  },
  { $id: 'ExperienceArmResult' },
);

export const ExperienceAnalytics = Type.Object(
  {
    experienceId: Type.String(),
    startDate: Timestamp,
    endDate: Timestamp,
    totals: Type.Object({
      views: Int('Page views, both arms'),
      visitors: Int('Distinct daily visitors, summed over days, both arms'),
      clicks: Int("Clicks on the experience's changed elements (only the personalised arm has them)"),
      conversions: Int('Conversions, both arms'),
    }),
    arms: Type.Array(ExperienceArmResult, { description: 'personalised, then holdout when the experience holds any out' }),
    decision: Type.Optional(
      StringEnum(['collecting', 'winner', 'no_difference'] as const, {
        description: "With a holdout: the experiments' anytime-valid decision, the holdout as baseline (docs/experiments.md)",
      }),
    ),
    winner: Type.Optional(
      Nullable(Type.String({ description: "With a holdout: the arm the decision names ('personalised' or 'holdout'); null while none" })),
    ),
    pValue: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1, description: 'Always valid; null while it cannot be computed' }))),
    lift: Type.Optional(
      Nullable(
        Type.Object(
          { estimate: Type.Number(), low: Type.Number(), high: Type.Number() },
          { description: "The personalised arm's conversion rate relative to the holdout's, with its confidence sequence" },
        ),
      ),
    ),
  },
  { $id: 'ExperienceAnalytics' },
);
export type ExperienceAnalytics = Static<typeof ExperienceAnalytics>;
