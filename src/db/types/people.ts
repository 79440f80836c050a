export interface PersonsTable {
  id: string;
  tenant_id: string;
  name: string;
  email: string | null;
  domain: string | null;
  /** Lowercased `domain`: what links a person to an account. */
  domain_lc: string | null;
  slug: string;
  phone_number: string | null;
  linkedin_profile_url: string | null;
  created_at: string;
  updated_at: string;
}

export interface AccountsTable {
  id: string;
  tenant_id: string;
  name: string;
  name_lc: string;
  domain: string;
  domain_lc: string;
  created_at: string;
  updated_at: string;
  /** Newest of `updated_at` and the newest log's `created_at`, kept current on every write. */
  latest_activity_at: string;
}

/** Person logs and account logs share one shape; `owner_id` is the person or the account. */
export interface LogsTable {
  id: string;
  tenant_id: string;
  owner_id: string;
  source: string;
  type: string;
  payload: string;
  idempotency_key: string | null;
  created_at: string;
  updated_at: string | null;
  deleted_at: string | null;
}
