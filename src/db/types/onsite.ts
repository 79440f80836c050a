import type { EXPERIENCE_STATUSES, URL_MATCH_TYPES } from '../enums.js';
import type { OneOf } from './one-of.js';

/** A customer's own site (migration 0064): the origins its snippet runs on, and the public key it names. */
export interface SitesTable {
  id: string;
  tenant_id: string;
  name: string;
  /** JSON: the origins, `scheme://host[:port]`, lowercased. */
  origins: string;
  /** Public and random: it is in the site's pages, and says only which site. */
  site_key: string;
  /** The last time the script ran on one of the origins, to the minute; null: never. */
  last_seen_at: string | null;
  created_at: string;
  updated_at: string;
}

/** Changes by selector on a site's pages, for the visitors whose URL and rules match (migration 0064). */
export interface ExperiencesTable {
  id: string;
  tenant_id: string;
  site_id: string;
  name: string;
  status: OneOf<typeof EXPERIENCE_STATUSES>;
  url_match_type: OneOf<typeof URL_MATCH_TYPES>;
  url_match_value: string;
  /** JSON: the segment rules (src/audiences/rules.ts); null: every visitor. */
  rules: string | null;
  priority: number;
  holdout_percent: number;
  /** A path pattern (glob) whose visit counts a conversion; null: none. */
  conversion_url: string | null;
  /** JSON: the changes (src/onsite/changes.ts). */
  changes: string;
  created_at: string;
  updated_at: string;
}
