import type {
  TenantsTable,
  ApiKeysTable,
  SlugCountersTable,
  IdempotencyKeysTable,
  TenantCountersTable,
  ServiceSecretsTable,
  ChangeCountersTable,
  SiteSettingsTable,
} from './types/tenants.js';
import type { PersonsTable, AccountsTable, LogsTable } from './types/people.js';
import type { PagesTable, AudiencesTable, AudienceVersionsTable, TopicsTable, TopicEntriesTable } from './types/pages.js';
import type { TenantDomainsTable, PageLinksTable } from './types/domains.js';
import type { FilesTable, FileBlobsTable, AssetsTable } from './types/files.js';
import type {
  EventSequenceTable,
  EventsTable,
  OutboxConsumedAheadTable,
  OutboxConsumersTable,
  WebhookDeliveriesTable,
  WebhookSubscriptionsTable,
} from './types/webhooks.js';
import type { AlertMessagesTable, AlertsTable, AlertWindowsTable } from './types/alerts.js';
import type {
  AudienceSessionsTable,
  AnalyticsHoursUtmTable,
  AnalyticsDaysTable,
  AnalyticsSiteHoursTable,
  AnalyticsSiteDaysTable,
  FormClaimsTable,
  LeadsTable,
} from './types/visits.js';
import type { SearchCountsTable, SearchDisorderTable, SearchPostingsTable } from './types/search.js';
import type {
  DailySecretsTable,
  ExperimentLooksTable,
  ExperimentLookMinimaTable,
  ExperimentPeriodsTable,
  ExperimentsTable,
  ExperimentUnitsTable,
} from './types/experiments.js';
import type { FunnelsTable, GoalsTable, VisitEventsTable } from './types/goals.js';
import type { HeatmapCellsTable, HeatmapDepthsTable, HeatmapSectionsTable, VisitMapsTable, WebVitalDaysTable } from './types/maps.js';
import type { TemplatesTable } from './types/templates.js';
import type { DealsTable } from './types/deals.js';
import type { IntegrationDealsTable, IntegrationLeadsTable, IntegrationsTable } from './types/integrations.js';
import type { OnsiteToolTokensTable } from './types/onsite-tools.js';
import type { ExperiencesTable, SitesTable } from './types/onsite.js';
import type {
  ExperienceDaysTable,
  ExperienceEarlyConversionsTable,
  ExperienceUnitsTable,
  ExperienceViewsTable,
} from './types/onsite-measures.js';

// The table types live by area in ./types/; importers take every one of them from here.
export type * from './types/tenants.js';
export type * from './types/people.js';
export type * from './types/pages.js';
export type * from './types/domains.js';
export type * from './types/files.js';
export type * from './types/webhooks.js';
export type * from './types/alerts.js';
export type * from './types/visits.js';
export type * from './types/search.js';
export type * from './types/experiments.js';
export type * from './types/goals.js';
export type * from './types/maps.js';
export type * from './types/templates.js';
export type * from './types/deals.js';
export type * from './types/integrations.js';
export type * from './types/onsite-tools.js';
export type * from './types/onsite.js';
export type * from './types/onsite-measures.js';

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
  outbox_consumers: OutboxConsumersTable;
  outbox_consumed_ahead: OutboxConsumedAheadTable;
  event_sequence: EventSequenceTable;
  webhook_deliveries: WebhookDeliveriesTable;
  alerts: AlertsTable;
  alert_windows: AlertWindowsTable;
  alert_messages: AlertMessagesTable;
  tenant_counters: TenantCountersTable;
  change_counters: ChangeCountersTable;
  analytics_hours_utm: AnalyticsHoursUtmTable;
  analytics_days: AnalyticsDaysTable;
  analytics_site_hours: AnalyticsSiteHoursTable;
  analytics_site_days: AnalyticsSiteDaysTable;
  search_counts: SearchCountsTable;
  search_disorder: SearchDisorderTable;
  /** PostgreSQL only (migration 0015). */
  search_postings: SearchPostingsTable;
  form_claims: FormClaimsTable;
  experiments: ExperimentsTable;
  experiment_periods: ExperimentPeriodsTable;
  experiment_units: ExperimentUnitsTable;
  experiment_looks: ExperimentLooksTable;
  experiment_look_minima: ExperimentLookMinimaTable;
  daily_secrets: DailySecretsTable;
  goals: GoalsTable;
  funnels: FunnelsTable;
  visit_events: VisitEventsTable;
  visit_maps: VisitMapsTable;
  heatmap_cells: HeatmapCellsTable;
  heatmap_sections: HeatmapSectionsTable;
  heatmap_depths: HeatmapDepthsTable;
  web_vital_days: WebVitalDaysTable;
  site_settings: SiteSettingsTable;
  leads: LeadsTable;
  templates: TemplatesTable;
  deals: DealsTable;
  integrations: IntegrationsTable;
  integration_leads: IntegrationLeadsTable;
  integration_deals: IntegrationDealsTable;
  onsite_tool_tokens: OnsiteToolTokensTable;
  sites: SitesTable;
  experiences: ExperiencesTable;
  experience_days: ExperienceDaysTable;
  experience_units: ExperienceUnitsTable;
  experience_views: ExperienceViewsTable;
  experience_early_conversions: ExperienceEarlyConversionsTable;
}
