/**
 * Which area owns each table: only the owner's folder (under src/) writes or reads it; other areas
 * call the owner's named functions. `npm run lint` (scripts/check-owners.ts) fails on an `insertInto`,
 * `updateTable`, `deleteFrom` or `replaceInto` naming a table outside its owner's folder, and on a
 * `selectFrom`, a join or a raw `sql` `from`/`join` outside it and outside the declared read models
 * below; a table held in a variable is followed through its type, and one it cannot follow fails.
 * On PostgreSQL the collector's function (src/visits/collect.sql.ts, called by visits/postgres-store.ts)
 * writes a visit's session, visit events, rollups and events in one round trip: the owners' statements
 * mirrored in SQL, no second owner (test/visits/parity.test.ts holds the two together).
 * The tables of `db/lease.ts`'s and `events/queue.ts`'s claims count as written where the claim is made
 * (`claimLeases`, `releaseLease`, `claimDueAttempts`, `releaseAttempt`).
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
  // Measurement has one owner (issue 47): visits/ keeps a visit's session, its goal occurrences, its
  // maps and the rollups that sum it, and serves the audience sessions' API; site/measure hands it reports.
  audience_sessions: 'visits',
  // A visit's goal occurrences (visits/occurrences.ts), from its reports and its form; goals define what counts.
  visit_events: 'visits',
  // Click and scroll maps and web vitals (issue 49): kept by the collector, read by visits/heatmap.ts.
  visit_maps: 'visits',
  heatmap_cells: 'visits',
  heatmap_sections: 'visits',
  heatmap_depths: 'visits',
  web_vital_days: 'visits',
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
  // Each consumer's cursor (events/consumers.ts); SQLite's numbering of events (migration 0069).
  outbox_consumers: 'events',
  outbox_consumed_ahead: 'events',
  event_sequence: 'events',
  // The rollups move with the session they sum (visits/rollups.ts); analytics/ reads them (its read model).
  analytics_hours_utm: 'visits',
  analytics_days: 'visits',
  analytics_site_hours: 'visits',
  analytics_site_days: 'visits',
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
  // The customer's own site (issue 48): the snippet, decisions and measurement read them through onsite's functions.
  sites: 'onsite',
  experiences: 'onsite',
  // The console's pick and preview tokens for the site script (issue 48 §5).
  onsite_tool_tokens: 'onsite',
  // What the customer's site reports about its experiences (src/onsite/measure/).
  experience_days: 'onsite',
  experience_units: 'onsite',
  experience_views: 'onsite',
  experience_early_conversions: 'onsite',
} as const satisfies Record<keyof Database, string>;

export type OwnedTable = keyof typeof OWNERS;

/**
 * Read models: reads that deliberately join across owners' tables, each kept in one place.
 * They never write another owner's table.
 */
export const READ_MODELS = {
  'site/serve/stamp.ts': 'the served-page stamp: page, audience, version and link read in one statement a request',
  'analytics/':
    "the names beside the numbers the visits' port answers: live pages and their names, the realtime visits' audiences, persons and accounts, the tenant's goals",
  'deals/pipeline.ts': "the influenced pipeline: deals, their accounts' persons, and those persons' sessions",
  'integrations/leads.ts': 'the leads a CRM has yet to receive: leads with their person, page and audience, less those pushed',
  // A served path's reads, each one statement a request, kept as they are for speed (issue 47).
  'site/serve/run.ts':
    "a served path's first statement: the tenant's change sequence, whether the domain is still verified, and the link at the path",
  'site/serve/resolve.ts': "a path without a link resolved: the tenant's published home page",
  'site/serve/choose.ts':
    "the choose step: a served page's live segments and whether any of the tenant's published segments reads company.*",
  'site/serve/served-files.ts': 'the files a tenant serves: every file id a live page, audience, version or the brand names',
  'db/search/': 'text search over the searched tables (persons, accounts, audiences, links) by their postings, called by each owner',
  'metrics/': "operational gauges: how deep and how old the outbox, the webhook deliveries and the agent's queue are",
  'leads/repository.ts': 'the leads list and export: each lead with its person, page, audience and session',
  'deals/touches.ts': "a deal's touches for attribution: its account's persons, their sessions and their leads",
  'deals/experience-touches.ts': "a deal's touches from the customer's own site: its account's identified experience views",
  'visits/sql-store.ts':
    "a report's target in one statement a report: the live page, the link's path, the audience's person and the stored session",
  'visits/reads.ts':
    "the analytics' reads through the ingest port: sums of the live pages (pages' deleted_at), and the goals a visit reached (goals' matchers, the audience's person)",
  'visits/journeys.ts':
    "the port's reads that follow a visitor: a funnel's occurrences in order (the audience's person), an experiment's units per arm and period (the experiment's units and periods)",
  'visits/announce.ts':
    "a visit's announcement: the goals its events reached and its audience's person, read in the announcing transaction",
  // Where the owner sits above the reader in the import order, the read stays beside the reader, named here.
  'http/auth.ts': 'the key check every /v0 request runs first (admin owns the keys and sits above http/)',
  'accounts/repository.ts': "an account's linked persons, counted by domain in the account's own statement (persons sits above)",
  'pages/repository.ts': "a page's audiences not archived, counted in the page's own statement (audiences sits above)",
  'page-links/repository.ts': "a link's target checked: the live audience or page it names (both sit above page-links)",
  'logs/repository.ts': "whether a log's owner, a person or an account, is the tenant's (persons sits above logs)",
  'audiences/claims.ts': "a person audience's person: its name and domain for the audience's name (persons sits above)",
  'audiences/search.ts':
    "audience search: the page names, kept in the page's row only, matched by the pages' own index and shown beside each audience (pages sits above)",
} as const;

/**
 * Functions written once for any table, whose caller names the table: the lint checks the caller
 * (a lease claim is checked where `claimLeases` is called), not the function's own `sql.table(...)`.
 */
export const TABLE_GENERIC = {
  'db/lease.ts': "a lease's claim and release, for the table the claim names",
  'events/queue.ts': "a delivery queue's claim and release (webhook deliveries, alert messages), for the table the claim names",
  'db/mentions.ts': "the rows of a table that mention a person, called by the table's owner (events, webhooks)",
  'db/search/': "each searched table's full-text index (`<table>_fts`, made by migrations), for the table the owner's search names",
} as const;
