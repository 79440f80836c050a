import type { FileStoreName } from '../config.js';
import type { DailySecretsTable, ExperimentPeriodsTable, ExperimentsTable } from './experiment-tables.js';
import type {
  DELIVERY_STATUSES,
  DOMAIN_STATUSES,
  IMAGE_TYPES,
  LIFECYCLE_STATES,
  PAGE_STATUSES,
  PAGE_TYPES,
  TARGET_TYPES,
  VERSION_STATUSES,
} from './enums.js';

/** One of a const list's values. */
type OneOf<List extends readonly string[]> = List[number];

/**
 * One table type per table, gathered in `Database`. Timestamps are ISO 8601 strings in UTC with
 * milliseconds (TEXT on SQLite, timestamptz on PostgreSQL); booleans are 0/1 integers on both
 * dialects; JSON documents are stored as text and parsed by the row mappers.
 */
export interface Database {
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  slug_counters: SlugCountersTable;
  idempotency_keys: IdempotencyKeysTable;
  persons: PersonsTable;
  accounts: AccountsTable;
  person_logs: LogsTable;
  account_logs: LogsTable;
  pages: PagesTable;
  audiences: AudiencesTable;
  audience_versions: AudienceVersionsTable;
  audience_sessions: AudienceSessionsTable;
  service_secrets: ServiceSecretsTable;
  files: FilesTable;
  file_blobs: FileBlobsTable;
  assets: AssetsTable;
  topics: TopicsTable;
  topic_entries: TopicEntriesTable;
  tenant_domains: TenantDomainsTable;
  page_links: PageLinksTable;
  webhook_subscriptions: WebhookSubscriptionsTable;
  events: EventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  tenant_counters: TenantCountersTable;
  analytics_hours_utm: AnalyticsHoursUtmTable;
  analytics_days: AnalyticsDaysTable;
  search_counts: SearchCountsTable;
  search_disorder: SearchDisorderTable;
  /** PostgreSQL only (migration 0015). */
  search_postings: SearchPostingsTable;
  form_claims: FormClaimsTable;
  experiments: ExperimentsTable;
  experiment_periods: ExperimentPeriodsTable;
  daily_secrets: DailySecretsTable;
}

/** When a view token's lead form was last accepted (site/forms.ts). */
export interface FormClaimsTable {
  visit_id: string;
  accepted_at: string;
}

export interface SearchPostingsTable {
  source: string;
  scope_id: string;
  gram: string;
  created_at: string;
  row_id: string;
}

export interface SearchDisorderTable {
  table_name: string;
  scope_id: string;
}

export interface SearchCountsTable {
  source: string;
  scope_id: string;
  facet: string;
  gram: string;
  n: number | string | bigint;
}

export interface TenantCountersTable {
  tenant_id: string;
  name: string;
  value: number;
}

export interface TenantsTable {
  id: string;
  name: string;
  slug: string;
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  tenant_id: string;
  /** SHA-256 of the key, hex: keys are random, so a fast hash is enough and the key is never stored. */
  key_hash: string;
  /** The first characters of the key, to recognise it in listings. */
  key_prefix: string;
  created_at: string;
  revoked_at: string | null;
  /** `read,write` or `read`: a read key may only GET. */
  scopes: string;
  expires_at: string | null;
  /** Null: the configured default. */
  rate_limit_per_second: number | null;
  rate_limit_burst: number | null;
  /** Recorded at most once a minute, off the request's path. */
  last_used_at: string | null;
}

export interface SlugCountersTable {
  scope: string;
  base: string;
  last_n: number;
}

export interface IdempotencyKeysTable {
  tenant_id: string;
  scope: string;
  key: string;
  request_hash: string;
  response_status: number;
  response_body: string;
  created_at: string;
  /** Null: the key lives as long as the resource it created. */
  expires_at: string | null;
}

export interface PersonsTable {
  id: string;
  tenant_id: string;
  name: string;
  email: string | null;
  domain: string | null;
  /** Lowercased `domain`: what links a person to an account. */
  domain_lc: string | null;
  slug: string;
  phone_number: string | null;
  linkedin_profile_url: string | null;
  created_at: string;
  updated_at: string;
}

export interface AccountsTable {
  id: string;
  tenant_id: string;
  name: string;
  name_lc: string;
  domain: string;
  domain_lc: string;
  created_at: string;
  updated_at: string;
  /** Newest of `updated_at` and the newest log's `created_at`, kept current on every write. */
  latest_activity_at: string;
}

/** Person logs and account logs share one shape; `owner_id` is the person or the account. */
export interface LogsTable {
  id: string;
  tenant_id: string;
  owner_id: string;
  source: string;
  type: string;
  payload: string;
  idempotency_key: string | null;
  created_at: string;
  updated_at: string | null;
  deleted_at: string | null;
}

/** Nested documents (flags, actions, widgets, links, scripts, metadata) are JSON text. */
export interface PagesTable {
  id: string;
  tenant_id: string;
  name: string;
  title: string;
  page_context: string;
  page_type: OneOf<typeof PAGE_TYPES>;
  status: OneOf<typeof PAGE_STATUSES>;
  flags: string;
  brand_id: string;
  header_action_id: string | null;
  actions: string;
  action_card_widgets: string;
  footer_links: string;
  scripts: string;
  metadata: string | null;
  /** Content JSON; null: the default made from the title. */
  content: string | null;
  /** How many audiences the page has ever had: numbers `Audience <n>`. */
  audience_seq: number;
  archived_at: string | null;
  deleted_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface AudiencesTable {
  id: string;
  tenant_id: string;
  page_id: string;
  /** 1-based creation number within the page; never changes. */
  number: number;
  custom_name: string | null;
  /** Kept current when the linked person is renamed, so search can index the names. */
  computed_name: string;
  effective_name: string;
  effective_name_lc: string;
  /** The page's name (and lowercased copy) and whether it is deleted, kept current by the page: audience search reads one table. */
  page_name: string;
  page_name_lc: string;
  page_deleted: number;
  person_id: string | null;
  person_route_key: string | null;
  flags: string;
  /** 1 when `flags` holds `home_page` (a column of its own so a partial unique index can hold it). */
  home_page: number;
  action_form_id_override: string | null;
  action_form_instructions_override: string | null;
  action_url_override: string | null;
  metadata_override: string | null;
  /** The highest version number handed out. */
  version_seq: number;
  latest_version_id: string;
  published_version_id: string;
  archived_at: string | null;
  created_at: string;
  updated_at: string;
  /** Set when the person it was made for was erased: it is archived for good, its links answer 410. */
  erased_at: string | null;
  /** SHA-256 of the page id and the route key it had then (hex), for the 410 at `P/<key>`; the key itself is gone. */
  erased_route_key: string | null;
}

export interface AudienceVersionsTable {
  id: string;
  tenant_id: string;
  audience_id: string;
  version_number: number;
  status: OneOf<typeof VERSION_STATUSES>;
  is_new_page_agent: number;
  supplementary_context: string | null;
  /** Content JSON; null: the page's content. */
  content: string | null;
  queue_duration_ms: number | null;
  created_at: string;
  became_draft_at: string | null;
  queued_at: string | null;
  published_at: string | null;
  cancelled_at: string | null;
  obsolete_at: string | null;
  archived_at: string | null;
  /** Why the agent gave up on it (it is then cancelled); null otherwise. */
  failure_reason: string | null;
  /** The agent's claim: until when one worker holds it (src/agent/worker.ts). */
  agent_lease_until: string | null;
  /** Generations the agent tried and that failed. */
  agent_attempts: number;
  /** After a failed try: not tried again before this. */
  agent_retry_at: string | null;
  /** Set on the versions a keyed regenerate request queued: one per audience per request. */
  regeneration_key: string | null;
}

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

export interface ServiceSecretsTable {
  name: string;
  value: string;
  created_at: string;
}

export interface FilesTable {
  id: string;
  tenant_id: string;
  content_type: OneOf<typeof IMAGE_TYPES>;
  size_bytes: number;
  sha256: string;
  width: number;
  height: number;
  /** Null when no preview could be made. */
  preview_content_type: string | null;
  /** Which store holds the bytes: a file keeps the store it was written to. */
  store: FileStoreName;
  created_at: string;
  /** Set when the last asset using the file was deleted and its bytes removed. */
  deleted_at: string | null;
}

export interface FileBlobsTable {
  key: string;
  data: Buffer;
}

export interface AssetsTable {
  id: string;
  tenant_id: string;
  name: string;
  purpose: string;
  tags: string;
  ai_description: string | null;
  parent_asset_id: string | null;
  hidden: number;
  file_id: string;
  lifecycle_state: OneOf<typeof LIFECYCLE_STATES>;
  created_at: string;
  updated_at: string;
  trashed_at: string | null;
  deleted_at: string | null;
}

export interface TopicsTable {
  id: string;
  tenant_id: string;
  title: string;
  purpose: string | null;
  sort_order: number;
  is_default: number;
  created_at: string;
  updated_at: string;
}

export interface TopicEntriesTable {
  id: string;
  tenant_id: string;
  topic_id: string;
  sort_order: number;
  content_type: string;
  content: string;
  created_at: string;
  updated_at: string;
}

export interface TenantDomainsTable {
  id: string;
  tenant_id: string;
  /** Unique among verified domains; a pending name may be claimed by several tenants. */
  hostname: string;
  is_fallback: number;
  created_at: string;
  status: OneOf<typeof DOMAIN_STATUSES>;
  verified_at: string | null;
  /** The TXT value that proves the claim; null once verified. */
  verification_value: string | null;
  /** When the background check looks at a pending domain again; null when it no longer does. */
  next_check_at: string | null;
}

export interface PageLinksTable {
  id: string;
  tenant_id: string;
  tenant_domain_id: string;
  path: string;
  path_lc: string;
  target_type: OneOf<typeof TARGET_TYPES>;
  target_audience_id: string | null;
  target_page_id: string | null;
  page_id: string;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface WebhookSubscriptionsTable {
  id: string;
  tenant_id: string;
  url: string;
  events: string;
  active: number;
  secret: string;
  /** During a rotation, deliveries are signed with both secrets until this expires. */
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
  /** Since when every delivery has failed; a subscription failing for 5 days is disabled. */
  failing_since: string | null;
}

export interface EventsTable {
  id: string;
  tenant_id: string;
  type: string;
  /** The webhook body, exactly as sent: `{type, timestamp, data}` (+ `previousStatus`). */
  payload: string;
  created_at: string;
  fanned_out: number;
  fan_lease_until: string | null;
}

export interface WebhookDeliveriesTable {
  id: string;
  tenant_id: string;
  subscription_id: string;
  event_id: string;
  event_type: string;
  status: OneOf<typeof DELIVERY_STATUSES>;
  attempts: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_response_status: number | null;
  last_error: string | null;
  lease_until: string | null;
  created_at: string;
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
