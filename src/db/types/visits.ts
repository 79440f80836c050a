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
  /** Classes the collector reduced a visit to (migration 0021); '' or the defaults for sessions it did not collect. */
  referrer_host: string;
  channel: string;
  /** GA4's default channel group (migration 0045, src/visits/traffic.ts). */
  channel_group: string;
  device_type: string;
  browser: string;
  os: string;
  country: string;
  /** HMAC of host, address and user agent under the day's salt; '' when not collected. Never exposed by the API. */
  visitor_hash: string;
  /** When `session.ended` falls due; null once announced or for sessions not collected. */
  end_due_at: string | null;
  /** 1: `session.ended` falls due the idle time after `session_ended_at`, and `end_due_at` is a lower bound of it (migration 0029). */
  end_due_follows: number | null;
  start_announced: number;
  end_announced: number;
  /** 1 when the session was its visitor's first of its UTC day on its page, or on the tenant's site (migration 0022). */
  first_of_day_page: number;
  first_of_day_site: number;
  /** 1: reported or posted with `Sec-GPC: 1` (migration 0043): no alert is woken by it; null (pam_collect's rows) is 0. */
  gpc: number | null;
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
  /** Sums of `first_of_day_page` and `first_of_day_site`: distinct visitors per day, summed over days. */
  visitors: number;
  site_visitors: number;
}

/**
 * The sessions of a page's audience that started in one UTC hour (`hour`: its first instant) with
 * one UTM source, medium and campaign ('' for none) and one set of visit classes (migration 0022).
 */
export interface AnalyticsHoursUtmTable extends RollupSums {
  tenant_id: string;
  page_id: string;
  audience_id: string;
  hour: string;
  utm_source: string;
  utm_medium: string;
  utm_campaign: string;
  channel: string;
  channel_group: string;
  referrer_host: string;
  device_type: string;
  browser: string;
  os: string;
  country: string;
}

/** The sessions of a page that started in one UTC day (`day`: its midnight), for the pages overview. */
export interface AnalyticsDaysTable extends RollupSums {
  tenant_id: string;
  page_id: string;
  day: string;
}

/** A tenant's sessions that started in one UTC hour, whatever their page or class (migration 0027). */
export interface AnalyticsSiteHoursTable extends RollupSums {
  tenant_id: string;
  hour: string;
}

/** A tenant's sessions that started in one UTC day with one value (`value`) of one session column (`dimension`). */
export interface AnalyticsSiteDaysTable extends RollupSums {
  tenant_id: string;
  dimension: string;
  day: string;
  value: string;
}

/** When a view token's lead form was last accepted (src/site/forms/leads.ts). */
export interface FormClaimsTable {
  visit_id: string;
  accepted_at: string;
}

/** One accepted lead form (src/site/forms/leads.ts): the person who filled it (lead-person.ts), on its visit's session. */
export interface LeadsTable {
  /** The form submission's id (`formSubmissionId` of `form.submitted`). */
  id: string;
  tenant_id: string;
  page_id: string;
  audience_id: string;
  session_id: string;
  person_id: string;
  action_id: string;
  created_at: string;
  /** What the visitor typed (migration 0031): never written to an existing person. '' for a phone left empty. */
  submitted_name: string;
  submitted_email: string;
  submitted_phone: string;
  /** The person of the link the form was on, when the lead is someone else's; null otherwise. */
  via_person_id: string | null;
  /** 1: posted with `Sec-GPC: 1` (migration 0038): kept here, never sent to a CRM. */
  gpc: number;
}
