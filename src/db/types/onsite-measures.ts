/** An experience's reports of one UTC day (`YYYY-MM-DD`) in one arm (migration 0066). */
export interface ExperienceDaysTable {
  tenant_id: string;
  experience_id: string;
  /** `personalised` or `holdout`. */
  arm: string;
  day: string;
  views: number | string | bigint;
  /** Distinct daily visitor keys that viewed. */
  visitors: number | string | bigint;
  /** Clicks on the experience's changed elements (the personalised arm's only). */
  clicks: number | string | bigint;
  /** Visitors who converted after viewing, each once. */
  conversions: number | string | bigint;
}

/** One daily visitor key that viewed an experience on one day (migration 0066). */
export interface ExperienceUnitsTable {
  tenant_id: string;
  experience_id: string;
  day: string;
  /** The daily visitor key of the decision: never an address. */
  unit: string;
  arm: string;
  /** Its first view of the day. */
  viewed_at: string;
  converted: number;
  /** The domain of the person the site identified the visitor as (`pam.identify`); null until then. */
  account_domain: string | null;
}

/** A page view's clicks so far on one experience's elements (migration 0066). */
export interface ExperienceViewsTable {
  /** SHA-256 of the decision token, base64url. */
  view_key: string;
  experience_id: string;
  day: string;
  clicks: number;
}

/** A conversion reported before the view it converts was kept (migration 0070). */
export interface ExperienceEarlyConversionsTable {
  tenant_id: string;
  day: string;
  unit: string;
  /** '' for `pam.conversion()`: every experience the unit viewed that day. */
  experience_id: string;
  /** The conversion page's decision time, ms since the epoch. */
  issued_at: number;
}
