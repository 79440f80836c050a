import type { IntegrationProvider, IntegrationStatus } from '../enums.js';

/** A tenant's CRM connection (migration 0038). */
export interface IntegrationsTable {
  id: string;
  tenant_id: string;
  provider: IntegrationProvider;
  status: IntegrationStatus;
  /** The credentials, AES-256-GCM ciphertext (src/integrations/secrets.ts): never in clear. */
  secrets: string;
  /** Salesforce: the org's My Domain address; null for HubSpot. */
  instance_url: string | null;
  created_at: string;
  updated_at: string;
  last_sync_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
  /** Where reading deals resumes: the last modification time read (the CRM's own clock), and the last id read at it. */
  deal_cursor: string | null;
  leads_pushed: number;
  deals_synced: number;
  /** When the background sync next takes it; a sync asked for now sets it to now. */
  sync_due_at: string;
  /** Held by the instance syncing it until then (db/lease.ts). */
  sync_lease_until: string | null;
}

/** A lead pushed to an integration's CRM: pushed once. */
export interface IntegrationLeadsTable {
  integration_id: string;
  lead_id: string;
  tenant_id: string;
  pushed_at: string;
}

/** A deal an integration has read from its CRM (migration 0047): `deals_synced` counts these. */
export interface IntegrationDealsTable {
  integration_id: string;
  external_id: string;
  tenant_id: string;
  read_at: string;
}
