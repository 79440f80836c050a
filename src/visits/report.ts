import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../http/schemas.js';

// The collector's one schema, apart from its route so that both stores of the ingest port (port.ts)
// take it from below.

/** The limit on a report, in bytes. */
export const MAX_REPORT_BYTES = 2048;

const Count = Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1 });
const Utm = Type.Optional(Type.String({ maxLength: 255 }));
const GoalName = Type.String({ minLength: 1, maxLength: 100 });
/** At most this many purposes and as many event names per report (the script keeps no more per visit). */
export const MAX_REPORTED_NAMES = 16;

export const VIEWPORTS = ['mobile', 'tablet', 'desktop'] as const;
export const CLICK_KINDS = ['action', 'link', 'image', 'faq', 'form', 'other'] as const;
/** A page has at most 50 sections (pages/schemas.ts): a visit's reach is one bit each. */
export const MAX_SECTIONS = 50;
export const GRID = 20;
/** The cells one report carries at most: the script sends its batch before it grows past this. */
export const MAX_REPORTED_CELLS = 64;
const Section = Type.Integer({ minimum: 0, maximum: MAX_SECTIONS - 1 });
const Cell = Type.Integer({ minimum: 0, maximum: GRID - 1 });
/** A web vital in milliseconds: an hour at most. */
const Millis = Type.Number({ minimum: 0, maximum: 3_600_000 });

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
    // Click and scroll maps and web vitals (issue 49, src/visits/maps.ts).
    viewport: Type.Optional(StringEnum(VIEWPORTS)),
    // The clicks since the previous report, per section, element kind and cell: [section, kind, x, y, clicks, rage clicks].
    cells: Type.Optional(
      Type.Array(Type.Tuple([Section, StringEnum(CLICK_KINDS), Cell, Cell, Count, Count]), { maxItems: MAX_REPORTED_CELLS }),
    ),
    // The sections the visit has seen at least half of, so far.
    reached: Type.Optional(Type.Array(Section, { maxItems: MAX_SECTIONS })),
    vitals: Type.Optional(
      Type.Object(
        {
          lcp: Type.Optional(Millis),
          inp: Type.Optional(Millis),
          cls: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
          fcp: Type.Optional(Millis),
          ttfb: Type.Optional(Millis),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type Report = Static<typeof Report>;
