import type { PAGE_STATUSES, PAGE_TYPES, VERSION_ORIGINS, VERSION_STATUSES } from '../enums.js';
import type { OneOf } from './one-of.js';

/** Nested documents (flags, actions, widgets, links, scripts, metadata) are JSON text. */
export interface PagesTable {
  id: string;
  tenant_id: string;
  name: string;
  /** `name` lowercased (by JavaScript): what audience search compares, with its own substring index. */
  name_lc: string;
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
  /** Whether the page is deleted, kept current by the page. Its name is read from the page (issue 50). */
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
  /** A segment's rules as JSON (audiences/rules.ts); null for every other audience. */
  rules: string | null;
  /** A segment's priority, 0–1000, higher first; null for every other audience. */
  priority: number | null;
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
  /** `written`: a person set the content; a page-wide regenerate leaves the audience alone (migration 0030). */
  origin: OneOf<typeof VERSION_ORIGINS>;
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
