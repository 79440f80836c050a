export interface AudienceSessionsTable {
  id: string;
  tenant_id: string;
  page_id: string;
  audience_id: string;
  analytics_session_id: string;
  page_title: string;
  page_url: string;
  session_started_at: string;
  session_ended_at: string;
  time_spent_seconds: number;
  max_scroll_depth_percentage: number;
  total_clicks_count: number;
  questions_asked_count: number;
  is_bounce: number;
  has_form_submit: number;
  has_conversion: number;
  form_submission_id: string;
  form_submission_identifier: string;
  form_submission_email: string;
  form_submission_phone: string;
  utm_campaign: string;
  utm_content: string;
  utm_medium: string;
  utm_source: string;
  utm_term: string;
  created_at: string;
  /** The view token's visit id, for a session recorded by the collector on a tenant domain; null otherwise. */
  visit_id: string | null;
  /** The experiment the visit was served in, its arm, and its unit (person, account or daily visitor key). */
  experiment_id: string | null;
  experiment_arm: string | null;
  experiment_unit: string | null;
}

/**
 * The sums of a set of audience sessions that every analytics metric is made from (src/analytics/).
 * `scroll_sum` adds up `max_scroll_depth_percentage`; the three flags are counts of sessions.
 */
export interface RollupSums {
  visits: number;
  bounces: number;
  time_spent_seconds: number;
  scroll_sum: number;
  clicks: number;
  questions: number;
  form_submits: number;
  conversions: number;
}

/**
 * The sessions of a page's audience that started in one UTC hour (`hour`: its first instant) with
 * one UTM source, medium and campaign ('' for none).
 */
export interface AnalyticsHoursUtmTable extends RollupSums {
  tenant_id: string;
  page_id: string;
  audience_id: string;
  hour: string;
  utm_source: string;
  utm_medium: string;
  utm_campaign: string;
}

/** The sessions of a page that started in one UTC day (`day`: its midnight), for the pages overview. */
export interface AnalyticsDaysTable extends RollupSums {
  tenant_id: string;
  page_id: string;
  day: string;
}

/** When a view token's lead form was last accepted (src/site/forms/leads.ts). */
export interface FormClaimsTable {
  visit_id: string;
  accepted_at: string;
}
