/**
 * The values of the columns that hold one of a fixed set (the file stores are in config.ts, which
 * picks one). The table types take their column types from these lists and the schemas build
 * their enums from them, so what the API speaks and what a row holds cannot drift apart, and the
 * row mappers need no casts.
 */
export const PAGE_TYPES = ['inbound', 'outbound', 'call_followup', 'sales_deck', 'custom'] as const;
export const PAGE_STATUSES = ['archived', 'draft', 'published'] as const;

/** The audience version's states; the moves between them are in `src/audiences/lifecycle.ts`. */
export const VERSION_STATUSES = ['archived', 'cancelled', 'draft', 'pending', 'processing', 'published', 'queued'] as const;
export type VersionStatus = (typeof VERSION_STATUSES)[number];
/** Where a version's content came from: the page agent wrote it, or a person set it (API, console, MCP). */
export const VERSION_ORIGINS = ['generated', 'written'] as const;
export type VersionOrigin = (typeof VERSION_ORIGINS)[number];

/** The image types an upload may be, by what its bytes really are. */
export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;
export type ImageType = (typeof IMAGE_TYPES)[number];

export const LIFECYCLE_STATES = ['active', 'trashed', 'deleted'] as const;

export const TARGET_TYPES = ['audience', 'page', 'page_routing'] as const;

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

/** A custom domain is served only once verified (src/domains/); a fallback domain always is. */
export const DOMAIN_STATUSES = ['verified', 'pending'] as const;

/** Experiments (src/experiments/): what they compare, how traffic is split, where they stand. */
export const EXPERIMENT_KINDS = ['holdout', 'versions'] as const;
export const EXPERIMENT_ALLOCATIONS = ['fixed', 'bandit'] as const;
export const EXPERIMENT_STATUSES = ['draft', 'running', 'concluded'] as const;
export const EXPERIMENT_DECISIONS = ['collecting', 'winner', 'no_difference'] as const;

/**
 * What a goal or a funnel step counts (src/goals/): a lead form, a page action's click, a link path's
 * visit, a `pam.track` event, a scroll at least so deep on a path (goals only, issue 49).
 */
export const GOAL_KINDS = ['form', 'action', 'path', 'event', 'scroll'] as const;
export type GoalKind = (typeof GOAL_KINDS)[number];
/** A served page's font: each a system font stack (src/render/brand.ts), so no font is downloaded. */
/** System stacks (nothing downloaded), then the self-hosted families (src/render/fonts.ts), served by the tenant's domain. */
export const SITE_FONTS = [
  'system',
  'serif',
  'rounded',
  'mono',
  'inter',
  'source-sans-3',
  'ibm-plex-sans',
  'lora',
  'merriweather',
  'playfair-display',
] as const;

/** Where a visit came from (issue 28): the classes the collector keeps of `document.referrer` (src/site/measure/source.ts). */
export const CHANNELS = ['direct', 'search', 'social', 'email', 'paid', 'referral'] as const;
export type Channel = (typeof CHANNELS)[number];
/**
 * Google Analytics 4's default channel groups, spelled as GA4 spells them (issue 45), in the order
 * GA4 evaluates its rules (src/visits/traffic.ts), `Unassigned` last.
 */
export const CHANNEL_GROUPS = [
  'Direct',
  'Cross-network',
  'Paid Shopping',
  'Paid Search',
  'Paid Social',
  'Paid Video',
  'Display',
  'Paid Other',
  'Organic Shopping',
  'Organic Social',
  'Organic Video',
  'Organic Search',
  'Referral',
  'Email',
  'Affiliates',
  'Audio',
  'SMS',
  'Mobile Push Notifications',
  'Unassigned',
] as const;
export type ChannelGroup = (typeof CHANNEL_GROUPS)[number];

/** Deals (src/deals/): where a deal came from and where it stands. */
export const DEAL_SOURCES = ['api', 'hubspot', 'salesforce'] as const;
export type DealSource = (typeof DEAL_SOURCES)[number];
export const DEAL_STAGES = ['open', 'won', 'lost'] as const;
export type DealStage = (typeof DEAL_STAGES)[number];

/** CRM integrations (src/integrations/): the CRMs spoken to, and whether the sync runs. */
export const INTEGRATION_PROVIDERS = ['hubspot', 'salesforce'] as const;
export type IntegrationProvider = (typeof INTEGRATION_PROVIDERS)[number];
export const INTEGRATION_STATUSES = ['active', 'paused'] as const;
export type IntegrationStatus = (typeof INTEGRATION_STATUSES)[number];

/** On-site experiences (src/onsite/, issue 48): where one stands, and how its page is matched. */
export const EXPERIENCE_STATUSES = ['draft', 'live', 'paused'] as const;
export type ExperienceStatus = (typeof EXPERIENCE_STATUSES)[number];
export const URL_MATCH_TYPES = ['exact', 'prefix', 'glob'] as const;
export type UrlMatchType = (typeof URL_MATCH_TYPES)[number];
