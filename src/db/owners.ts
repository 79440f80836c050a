/**
 * Which area owns each table: only the owner's folder (under src/) writes it; other areas call the
 * owner's named functions. `npm run lint` (scripts/check-owners.ts) fails on an `insertInto`,
 * `updateTable`, `deleteFrom` or `replaceInto` naming a table outside its owner's folder.
 * Reads may cross areas only as the declared read models below. On PostgreSQL the collector's
 * function (migration 0028, called by site/measure/report-once.ts) writes a visit's session, visit
 * events, rollups and events in one round trip: the owners' statements mirrored in SQL, no second owner.
 * The tables of `db/lease.ts`'s claims count as written where the claim is made (`claimLeases`, `releaseLease`).
 */
import type { Database } from './types.js';

export const OWNERS = {
  tenants: 'admin',
  // Keys are made and revoked by the operator's admin plane; http/auth's last-use stamp calls admin's function.
  api_keys: 'admin',
  // The idempotency layer every route shares (http/idempotency.ts) keeps the remembered answers.
  idempotency_keys: 'http',
  // Counters and secrets every area uses sit on the shared floor: db/slugs.ts, counters.ts, changes.ts, daily-secrets.ts.
  slug_counters: 'db',
  tenant_counters: 'db',
  change_counters: 'db',
  daily_secrets: 'db',
  // Written by triggers (migrations 0014, 0015) as the searched tables change; db/search reads them.
  search_counts: 'db/search',
  search_disorder: 'db/search',
  search_postings: 'db/search',
  persons: 'persons',
  accounts: 'accounts',
  // One timeline module for both owners' logs: the shape and the paging are shared.
  person_logs: 'logs',
  account_logs: 'logs',
  pages: 'pages',
  audiences: 'audiences',
  audience_versions: 'audiences',
  // The collector (site/measure) records visits through the sessions area's functions.
  audience_sessions: 'sessions',
  // Goals write the completions; the collector's PostgreSQL function (a migration) writes the rest.
  visit_events: 'goals',
  // The service's kept secrets (file URL signing, the integrations' key), made by assets/files.ts at start-up.
  service_secrets: 'assets',
  files: 'assets',
  file_blobs: 'assets',
  assets: 'assets',
  topics: 'topics',
  topic_entries: 'topics',
  tenant_domains: 'domains',
  page_links: 'page-links',
  webhook_subscriptions: 'webhooks',
  // Made in the webhook fan-out's transaction by alerts' own function (alerts/fan-out.ts).
  alerts: 'alerts',
  alert_windows: 'alerts',
  alert_messages: 'alerts',
  webhook_deliveries: 'webhooks',
  events: 'events',
  analytics_hours_utm: 'analytics',
  analytics_days: 'analytics',
  analytics_site_hours: 'analytics',
  analytics_site_days: 'analytics',
  // The one-lead-per-view claim belongs to the lead form that takes it.
  form_claims: 'site/forms',
  experiments: 'experiments',
  experiment_periods: 'experiments',
  experiment_units: 'experiments',
  experiment_looks: 'experiments',
  experiment_look_minima: 'experiments',
  goals: 'goals',
  funnels: 'funnels',
  site_settings: 'site-settings',
  leads: 'leads',
  templates: 'templates',
  deals: 'deals',
  integrations: 'integrations',
  integration_leads: 'integrations',
  integration_deals: 'integrations',
} as const satisfies Record<keyof Database, string>;

export type OwnedTable = keyof typeof OWNERS;

/**
 * Read models: reads that deliberately join across owners' tables, each kept in one place.
 * They never write another owner's table.
 */
export const READ_MODELS = {
  'site/serve/stamp.ts': 'the served-page stamp: page, audience, version and link read in one statement a request',
  'analytics/': 'rollups and reports: sessions, pages and audiences read together for aggregates',
  'funnels/results.ts': 'funnels: sessions and their visit events in order, grouped by audience',
  'experiments/results.ts': "an experiment's counts: sessions and goal completions per arm",
  'deals/pipeline.ts': "the influenced pipeline: deals, their accounts' persons, and those persons' sessions",
  'integrations/leads.ts': 'the leads a CRM has yet to receive: leads with their person, page and audience, less those pushed',
} as const;
