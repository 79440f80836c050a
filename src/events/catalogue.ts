/**
 * Every event the service emits, and so every event a webhook subscription may ask for
 * (`*` asks for all). docs/webhooks.md describes each.
 */
export const EVENT_TYPES = [
  'page.created',
  'page.updated',
  'page.deleted',
  'audience.created',
  'audience_version.created',
  'audience_version.status_changed',
  'audience_session.created',
  'asset.created',
  'asset.updated',
  'asset.deleted',
  'topic.created',
  'topic_entry.created',
  'person.created',
  'person.updated',
  'person_log.created',
  'account.created',
  'account_log.created',
  'page_link.created',
  'page_link.deleted',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const SUBSCRIBABLE_EVENTS = [...EVENT_TYPES, '*'] as const;
