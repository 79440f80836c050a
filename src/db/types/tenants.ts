import type { SITE_FONTS } from '../enums.js';
import type { OneOf } from './one-of.js';

export interface TenantsTable {
  id: string;
  name: string;
  slug: string;
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  tenant_id: string;
  /** SHA-256 of the key, hex: keys are random, so a fast hash is enough and the key is never stored. */
  key_hash: string;
  /** The first characters of the key, to recognise it in listings. */
  key_prefix: string;
  created_at: string;
  revoked_at: string | null;
  /** `read,write` or `read`: a read key may only GET. */
  scopes: string;
  expires_at: string | null;
  /** Null: the configured default. */
  rate_limit_per_second: number | null;
  rate_limit_burst: number | null;
  /** Recorded at most once a minute, off the request's path. */
  last_used_at: string | null;
}

export interface SlugCountersTable {
  scope: string;
  base: string;
  last_n: number;
}

export interface IdempotencyKeysTable {
  tenant_id: string;
  scope: string;
  key: string;
  request_hash: string;
  response_status: number;
  response_body: string;
  created_at: string;
  /** Null: the key lives as long as the resource it created. */
  expires_at: string | null;
}

export interface TenantCountersTable {
  tenant_id: string;
  name: string;
  value: number;
}

export interface ServiceSecretsTable {
  name: string;
  value: string;
  created_at: string;
}

/** One row per kind of change (src/db/changes.ts), moved in the transaction that makes the change. */
export interface ChangeCountersTable {
  scope: string;
  value: number;
}

/** The tenant's brand on served pages (src/site-settings/); no row: the default style. */
export interface SiteSettingsTable {
  tenant_id: string;
  logo_asset_id: string | null;
  favicon_asset_id: string | null;
  /** `#rrggbb`, lowercased. */
  brand_color: string;
  text_color: string;
  background_color: string;
  font: OneOf<typeof SITE_FONTS>;
  footer_text: string | null;
  privacy_url: string | null;
  /** ISO 3166-1 alpha-2, uppercased: the country of phone numbers typed without a country code. */
  default_country: string | null;
  /** 1: leads' email domains name accounts and the enrichment provider is asked (issue 39); 0: off. */
  enrichment: number;
  created_at: string;
  updated_at: string;
}
