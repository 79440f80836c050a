import type { AudienceSessionsTable } from './types.js';

type Column = keyof AudienceSessionsTable;

/**
 * What the collector reduced a visit to at its first report (migration 0021; `channel_group`: 0045);
 * '' or the defaults when it did not collect it.
 */
const CLASSES = [
  'channel',
  'channel_group',
  'referrer_host',
  'device_type',
  'browser',
  'os',
  'country',
] as const satisfies readonly Column[];
const UTM = ['utm_campaign', 'utm_content', 'utm_medium', 'utm_source', 'utm_term'] as const satisfies readonly Column[];

/**
 * The groups of `audience_sessions`' columns, declared once: the sessions' writes, the collector,
 * the analytics' reads and rollups, and a person's erasure each take the groups they need from here.
 */
export const SESSION_COLUMNS = {
  /** What a visit adds up to, as its reports and a lead form change it. */
  counts: [
    'time_spent_seconds',
    'max_scroll_depth_percentage',
    'total_clicks_count',
    'questions_asked_count',
    'is_bounce',
    'has_form_submit',
    'has_conversion',
  ],
  /** A lead form's fields: one of them naming a person makes the others theirs too. */
  form: ['form_submission_id', 'form_submission_identifier', 'form_submission_email', 'form_submission_phone'],
  utm: UTM,
  classes: CLASSES,
  /** 1 when the session was its visitor's first of its UTC day on its page, or on the site (migration 0022). */
  firsts: ['first_of_day_page', 'first_of_day_site'],
  /** Where `session.ended` stands: claimed and announced once (visits/announce.ts). */
  announcing: ['end_due_at', 'end_due_follows', 'start_announced', 'end_announced'],
  /** Every grouping the site answer offers, each a column of the rollups (migration 0027), in their order. */
  dimensions: ['utm_source', 'utm_medium', 'utm_campaign', ...CLASSES],
} as const satisfies Record<string, readonly Column[]>;

export type SessionColumn<G extends keyof typeof SESSION_COLUMNS> = (typeof SESSION_COLUMNS)[G][number];
