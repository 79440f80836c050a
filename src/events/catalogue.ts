/**
 * Every event the service emits, and so every event a webhook subscription may ask for
 * (`*` asks for all). docs/webhooks.md describes each.
 */
export const EVENT_TYPES = [
  'page.created',
  'page.updated',
  'page.deleted',
  'audience.created',
  'audience.updated',
  'audience.archived',
  'audience.restored',
  'audience_version.created',
  'audience_version.updated',
  'audience_version.status_changed',
  'page.version.published',
  'audience_session.created',
  'visit.started',
  'session.ended',
  // `data`: FormSubmittedData (src/leads/schemas.ts).
  'form.submitted',
  // Issue 39: a lead's email domain named an account (FormEnrichedData), or why not (FormEnrichmentFailedData).
  'form.enriched',
  'form.enrichment_failed',
  'asset.created',
  'asset.updated',
  'asset.deleted',
  'topic.created',
  'topic.updated',
  'topic.deleted',
  'topic_entry.created',
  'topic_entry.updated',
  'topic_entry.deleted',
  'person.created',
  'person.updated',
  'person.deleted',
  'person_log.created',
  'person_log.updated',
  'person_log.deleted',
  'account.created',
  'account.updated',
  'account.deleted',
  'account_log.created',
  'account_log.updated',
  'account_log.deleted',
  'page_link.created',
  'page_link.updated',
  'page_link.deleted',
  'tenant_domain.verified',
  'tenant_domain.released',
  'experiment.started',
  'experiment.concluded',
  'template.created',
  'template.deleted',
  'deal.created',
  'deal.updated',
  'deal.deleted',
  // `data`: the Integration (src/integrations/schemas.ts), paused because its CRM refused the credentials.
  'integration.failed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const SUBSCRIBABLE_EVENTS = [...EVENT_TYPES, '*'] as const;
