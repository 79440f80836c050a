/**
 * One table type per table, gathered in `Database`. Timestamps are ISO 8601 strings in UTC with
 * milliseconds (TEXT on SQLite, timestamptz on PostgreSQL); booleans are 0/1 integers on both
 * dialects; JSON documents are stored as text and parsed by the row mappers.
 */
export interface Database {
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  slug_counters: SlugCountersTable;
  idempotency_keys: IdempotencyKeysTable;
  persons: PersonsTable;
  accounts: AccountsTable;
  person_logs: LogsTable;
  account_logs: LogsTable;
}

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
