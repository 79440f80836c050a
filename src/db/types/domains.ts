import type { DOMAIN_STATUSES, TARGET_TYPES } from '../enums.js';
import type { OneOf } from './one-of.js';

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
