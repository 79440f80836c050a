import type { Migration } from 'kysely';
import * as foundation from './2026_11_22_0001_foundation.js';
import * as pagesAudiences from './2026_11_22_0002_pages_audiences.js';
import * as assetsTopicsLinksWebhooks from './2026_11_22_0003_assets_topics_links_webhooks.js';
import * as eventsDeliveries from './2026_11_22_0004_events_deliveries.js';
import * as tenantCounters from './2026_11_22_0005_tenant_counters.js';
import * as apiKeyLimits from './2026_11_22_0006_api_key_limits.js';
import * as pageCounters from './2026_11_22_0007_page_counters.js';
import * as audienceKeys from './2026_11_23_0008_audience_keys.js';
import * as logTimelines from './2026_11_23_0009_log_timelines.js';
import * as visits from './2026_11_23_0010_visits.js';
import * as content from './2026_11_23_0011_content.js';
import * as agent from './2026_11_24_0012_agent.js';
import * as analytics from './2026_11_24_0013_analytics.js';
import * as searchCounts from './2026_11_24_0014_search_counts.js';
import * as searchPostings from './2026_11_24_0015_search_postings.js';
import * as domainVerification from './2026_11_25_0016_domain_verification.js';
import * as formClaims from './2026_11_25_0017_form_claims.js';
import * as erasedAudiences from './2026_11_25_0018_erased_audiences.js';
import * as experiments from './2026_11_25_0019_experiments.js';
import * as changeCounters from './2026_11_26_0020_change_counters.js';
import * as assetsList from './2026_11_26_0021_assets_list.js';
import * as visitClasses from './2026_11_27_0021_visit_classes.js';
import * as goalsFunnels from './2026_11_27_0022_goals_funnels.js';
import * as visitorRollups from './2026_11_27_0022_visitor_rollups.js';
import * as siteSettings from './2026_11_27_0023_site_settings.js';
import * as tenantChanges from './2026_11_27_0024_tenant_changes.js';
import * as siteSettingsChanges from './2026_11_27_0025_site_settings_changes.js';
import * as siteRollups from './2026_11_28_0027_site_rollups.js';
import * as collectFunction from './2026_11_28_0028_collect_function.js';
import * as endDueFollows from './2026_11_29_0029_end_due_follows.js';
import * as versionOrigin from './2026_11_30_0030_version_origin.js';
import * as leadSubmitted from './2026_11_30_0031_lead_submitted.js';
import * as experimentUnits from './2026_11_30_0032_experiment_units.js';
import * as goalLimits from './2026_11_30_0033_goal_limits.js';
import * as siteDefaultCountry from './2026_11_30_0034_site_default_country.js';
import * as templates from './2026_12_01_0035_templates.js';
import * as segments from './2026_12_01_0036_segments.js';
import * as deals from './2026_12_01_0037_deals.js';
import * as integrations from './2026_12_01_0038_integrations.js';
import * as alerts from './2026_12_01_0039_alerts.js';
import * as enrichment from './2026_12_01_0041_enrichment.js';
import * as visitGpc from './2026_12_02_0043_visit_gpc.js';
import * as bulkWriteTriggers from './2026_12_03_0044_bulk_write_triggers.js';
import * as channelGroups from './2026_12_04_0045_channel_groups.js';
import * as alertWebhookSecrets from './2026_12_04_0046_alert_webhook_secrets.js';
import * as integrationDeals from './2026_12_04_0047_integration_deals.js';
import * as pageItselfSessions from './2026_12_04_0051_page_itself_sessions.js';
import * as experimentLookMinima from './2026_12_04_0052_experiment_look_minima.js';
import * as fileRenditions from './2026_12_05_0054_file_renditions.js';
import * as companySegmentsIndex from './2026_12_05_0062_company_segments_index.js';
import * as shardedSiteSequence from './2026_12_05_0063_sharded_site_sequence.js';
import * as onsite from './2026_12_06_0064_onsite.js';
import * as onsiteToolTokens from './2026_12_06_0065_onsite_tool_tokens.js';
import * as clickScrollMaps from './2026_12_06_0067_click_scroll_maps.js';
import * as pageNameOnce from './2026_12_06_0068_page_name_once.js';
import * as outboxConsumers from './2026_12_07_0069_outbox_consumers.js';
import * as earlyConversions from './2026_12_08_0070_early_conversions.js';
import * as changeWriters from './2026_12_09_0071_change_writers.js';
import * as eventPositionInInsert from './2026_12_10_0072_event_position_in_insert.js';
import * as shardedTenantCounters from './2026_12_11_0073_sharded_tenant_counters.js';
import * as pageNamesIndex from './2026_12_12_0074_page_names_index.js';
import * as experienceMeasures from './2026_12_06_0066_experience_measures.js';

/** Every migration, by name; names sort in the order they must run. Add new files here. */
export const migrations: Record<string, Migration> = {
  '2026_11_22_0001_foundation': foundation,
  '2026_11_22_0002_pages_audiences': pagesAudiences,
  '2026_11_22_0003_assets_topics_links_webhooks': assetsTopicsLinksWebhooks,
  '2026_11_22_0004_events_deliveries': eventsDeliveries,
  '2026_11_22_0005_tenant_counters': tenantCounters,
  '2026_11_22_0006_api_key_limits': apiKeyLimits,
  '2026_11_22_0007_page_counters': pageCounters,
  '2026_11_23_0008_audience_keys': audienceKeys,
  '2026_11_23_0009_log_timelines': logTimelines,
  '2026_11_23_0010_visits': visits,
  '2026_11_23_0011_content': content,
  '2026_11_24_0012_agent': agent,
  '2026_11_24_0013_analytics': analytics,
  '2026_11_24_0014_search_counts': searchCounts,
  '2026_11_24_0015_search_postings': searchPostings,
  '2026_11_25_0016_domain_verification': domainVerification,
  '2026_11_25_0017_form_claims': formClaims,
  '2026_11_25_0018_erased_audiences': erasedAudiences,
  '2026_11_25_0019_experiments': experiments,
  '2026_11_26_0020_change_counters': changeCounters,
  '2026_11_26_0021_assets_list': assetsList,
  '2026_11_27_0021_visit_classes': visitClasses,
  '2026_11_27_0022_goals_funnels': goalsFunnels,
  '2026_11_27_0022_visitor_rollups': visitorRollups,
  '2026_11_27_0023_site_settings': siteSettings,
  '2026_11_27_0024_tenant_changes': tenantChanges,
  '2026_11_27_0025_site_settings_changes': siteSettingsChanges,
  '2026_11_28_0027_site_rollups': siteRollups,
  '2026_11_28_0028_collect_function': collectFunction,
  '2026_11_29_0029_end_due_follows': endDueFollows,
  '2026_11_30_0030_version_origin': versionOrigin,
  '2026_11_30_0031_lead_submitted': leadSubmitted,
  '2026_11_30_0032_experiment_units': experimentUnits,
  '2026_11_30_0033_goal_limits': goalLimits,
  '2026_11_30_0034_site_default_country': siteDefaultCountry,
  '2026_12_01_0035_templates': templates,
  '2026_12_01_0036_segments': segments,
  '2026_12_01_0037_deals': deals,
  '2026_12_01_0038_integrations': integrations,
  '2026_12_01_0039_alerts': alerts,
  '2026_12_01_0041_enrichment': enrichment,
  '2026_12_02_0043_visit_gpc': visitGpc,
  '2026_12_03_0044_bulk_write_triggers': bulkWriteTriggers,
  '2026_12_04_0045_channel_groups': channelGroups,
  '2026_12_04_0046_alert_webhook_secrets': alertWebhookSecrets,
  '2026_12_04_0047_integration_deals': integrationDeals,
  '2026_12_04_0051_page_itself_sessions': pageItselfSessions,
  '2026_12_04_0052_experiment_look_minima': experimentLookMinima,
  '2026_12_05_0054_file_renditions': fileRenditions,
  '2026_12_05_0062_company_segments_index': companySegmentsIndex,
  '2026_12_05_0063_sharded_site_sequence': shardedSiteSequence,
  '2026_12_06_0064_onsite': onsite,
  '2026_12_06_0065_onsite_tool_tokens': onsiteToolTokens,
  '2026_12_06_0067_click_scroll_maps': clickScrollMaps,
  '2026_12_06_0068_page_name_once': pageNameOnce,
  '2026_12_06_0066_experience_measures': experienceMeasures,
  '2026_12_07_0069_outbox_consumers': outboxConsumers,
  '2026_12_08_0070_early_conversions': earlyConversions,
  '2026_12_09_0071_change_writers': changeWriters,
  '2026_12_10_0072_event_position_in_insert': eventPositionInInsert,
  '2026_12_11_0073_sharded_tenant_counters': shardedTenantCounters,
  '2026_12_12_0074_page_names_index': pageNamesIndex,
};
