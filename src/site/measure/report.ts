import { Type, type Static } from '@sinclair/typebox';

// The collector's one schema, apart from its route so that the PostgreSQL statement (report-once.ts)
// and the transaction (collect.ts) both take it from below.

/** The limit on a report, in bytes. */
export const MAX_REPORT_BYTES = 2048;

const Count = Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1 });
const Utm = Type.Optional(Type.String({ maxLength: 255 }));
const GoalName = Type.String({ minLength: 1, maxLength: 100 });
/** At most this many purposes and as many event names per report (the script keeps no more per visit). */
export const MAX_REPORTED_NAMES = 16;

/** One report of `/_pam/v.js`: the visit's totals so far. Counts beyond the humanly possible are cut, not refused. */
export const Report = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 1024 }),
    visibleMs: Count,
    scroll: Type.Number({ minimum: 0, maximum: 100 }),
    clicks: Count,
    questions: Count,
    conversions: Count,
    utmSource: Utm,
    utmMedium: Utm,
    utmCampaign: Utm,
    utmTerm: Utm,
    utmContent: Utm,
    // Totals so far per name: `pam.track(name, { value })` calls with their values' sum, and clicks on page actions by purpose.
    events: Type.Optional(
      Type.Array(Type.Tuple([GoalName, Count, Type.Number({ minimum: 0, maximum: 1e15 })]), { maxItems: MAX_REPORTED_NAMES }),
    ),
    actions: Type.Optional(Type.Array(Type.Tuple([GoalName, Count]), { maxItems: MAX_REPORTED_NAMES })),
    referrer: Type.Optional(Type.String({ maxLength: 1024 })),
    adClick: Type.Optional(Type.Boolean()),
    left: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type Report = Static<typeof Report>;
