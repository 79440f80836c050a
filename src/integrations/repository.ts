import { type Kysely, sql, type Transaction } from 'kysely';
import type { IntegrationsConfig } from '../config.js';
import type { Database, IntegrationsTable } from '../db/types.js';
import { emit, type EventHandler } from '../events/index.js';
import { invalidField } from '../http/errors.js';
import { keysetList, NEWEST_FIRST } from '../http/pagination.js';
import { settle, throwIfAny } from '../http/round-trip.js';
import type { FieldError } from '../http/errors.js';
import { newId } from '../ids.js';
import { after, now } from '../time.js';
import type { Credentials, Sealer } from './secrets.js';
import { type Integration, type IntegrationCreate, type IntegrationListQuery, IntegrationUpdate } from './schemas.js';

/** What the area's writes need from app.ts: the key the credentials are sealed with, and the addresses. */
export interface IntegrationsContext {
  sealer: Sealer;
  config: IntegrationsConfig;
}

export const toIntegration = (row: IntegrationsTable): Integration => ({
  integrationId: row.id,
  provider: row.provider,
  status: row.status,
  instanceUrl: row.instance_url,
  lastSyncAt: row.last_sync_at,
  lastError: row.last_error,
  lastErrorAt: row.last_error_at,
  nextSyncAt: row.status === 'active' ? row.sync_due_at : null,
  counts: { leadsPushed: row.leads_pushed, dealsSynced: row.deals_synced },
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/**
 * Salesforce's own hosts: an org's My Domain (and its sandboxes) is a subdomain of one of them,
 * never the apex itself, which no org is served from.
 */
const SALESFORCE_HOST = /^([a-z0-9-]+\.)+(my\.salesforce\.com|salesforce\.com|force\.com)$/i;
const APEXES = new Set(['my.salesforce.com', 'salesforce.com', 'force.com']);

/**
 * An instance URL is where the client's credentials and its leads are sent, so it must be
 * Salesforce's (https on 443, a subdomain of my.salesforce.com, salesforce.com or force.com), or
 * the operator's SALESFORCE_LOGIN_URL origin (a proxy, or a test server). Stored as its origin.
 */
function checkInstanceUrl(value: string, config: IntegrationsConfig): string {
  const refusal = "must be your org's https://<name>.my.salesforce.com address";
  if (!URL.canParse(value) || /\s/.test(value)) throw invalidField('/instanceUrl', refusal);
  const url = new URL(value);
  if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) {
    throw invalidField('/instanceUrl', `${refusal}, without a path, query or credentials`);
  }
  if (url.origin === new URL(config.salesforceLoginUrl).origin) return url.origin;
  // `port` is empty when it is the scheme's default: https on 443, written or not.
  if (url.protocol !== 'https:' || url.port !== '') throw invalidField('/instanceUrl', `${refusal}: https on port 443`);
  const host = url.hostname.toLowerCase();
  if (!SALESFORCE_HOST.test(host) || APEXES.has(host)) throw invalidField('/instanceUrl', refusal);
  return url.origin;
}

type CredentialFields = Pick<IntegrationCreate, 'accessToken' | 'clientId' | 'clientSecret'> & { instanceUrl?: string | null };

/** The fields each provider takes: another provider's field is a 400 naming it, a missing one too. */
function credentialsFor(provider: IntegrationsTable['provider'], given: CredentialFields, creating: boolean): Credentials {
  const errors: FieldError[] = [];
  const own = provider === 'hubspot' ? ['accessToken'] : ['clientId', 'clientSecret', 'instanceUrl'];
  for (const field of ['accessToken', 'clientId', 'clientSecret', 'instanceUrl'] as const) {
    const present = given[field] !== undefined;
    if (present && !own.includes(field)) errors.push({ path: `/${field}`, message: `is not a field of a ${provider} integration` });
    if (!present && creating && own.includes(field))
      errors.push({ path: `/${field}`, message: `is required for a ${provider} integration` });
  }
  throwIfAny(errors);
  if (provider === 'hubspot') return given.accessToken === undefined ? {} : { accessToken: given.accessToken };
  return {
    ...(given.clientId === undefined ? {} : { clientId: given.clientId }),
    ...(given.clientSecret === undefined ? {} : { clientSecret: given.clientSecret }),
  };
}

export async function createIntegration(
  trx: Transaction<Database>,
  tenantId: string,
  input: IntegrationCreate,
  { sealer, config }: IntegrationsContext,
): Promise<Integration> {
  const credentials = credentialsFor(input.provider, input, true);
  const instanceUrl = input.instanceUrl === undefined ? null : checkInstanceUrl(input.instanceUrl, config);
  const at = now();
  const id = newId('integration');
  const row: IntegrationsTable = {
    id,
    tenant_id: tenantId,
    provider: input.provider,
    status: 'active',
    secrets: sealer.seal(id, credentials),
    instance_url: instanceUrl,
    created_at: at,
    updated_at: at,
    last_sync_at: null,
    last_error: null,
    last_error_at: null,
    deal_cursor: null,
    leads_pushed: 0,
    deals_synced: 0,
    // The first sync at once: the client sees the connection work (or fail) right away.
    sync_due_at: at,
    sync_lease_until: null,
  };
  await trx.insertInto('integrations').values(row).execute();
  return toIntegration(row);
}

export function findIntegration(db: Kysely<Database>, tenantId: string, integrationId: string) {
  return db.selectFrom('integrations').selectAll().where('id', '=', integrationId).where('tenant_id', '=', tenantId).executeTakeFirst();
}

export async function updateIntegration(
  trx: Transaction<Database>,
  tenantId: string,
  integrationId: string,
  body: IntegrationUpdate,
  { sealer, config }: IntegrationsContext,
): Promise<Integration | undefined> {
  const current = await findIntegration(trx, tenantId, integrationId);
  if (!current) return undefined;
  const shown = toIntegration(current);
  const patch = settle(IntegrationUpdate, body, shown);
  const rotated = credentialsFor(current.provider, patch, false);
  if (Object.keys(patch).length === 0) return shown;
  const changes: Partial<IntegrationsTable> = { updated_at: after(current.updated_at) };
  if (patch.instanceUrl === null) throw invalidField('/instanceUrl', 'cannot be removed from a Salesforce integration');
  if (patch.instanceUrl !== undefined) changes.instance_url = checkInstanceUrl(patch.instanceUrl, config);
  if (Object.keys(rotated).length > 0) {
    const stored = sealer.open(current.id, current.secrets) ?? {};
    changes.secrets = sealer.seal(current.id, { ...stored, ...rotated });
  }
  if (patch.status !== undefined) changes.status = patch.status;
  // Resumed, or given new credentials: the next sync runs at once, and says whether they work.
  if (patch.status === 'active' || changes.secrets !== undefined || changes.instance_url !== undefined) changes.sync_due_at = now();
  const row = await trx.updateTable('integrations').set(changes).where('id', '=', current.id).returningAll().executeTakeFirstOrThrow();
  return toIntegration(row);
}

export async function deleteIntegration(trx: Transaction<Database>, tenantId: string, integrationId: string): Promise<boolean> {
  const current = await findIntegration(trx, tenantId, integrationId);
  if (!current) return false;
  await trx.deleteFrom('integration_leads').where('integration_id', '=', current.id).execute();
  await trx.deleteFrom('integration_deals').where('integration_id', '=', current.id).execute();
  await trx.deleteFrom('integrations').where('id', '=', current.id).execute();
  return true;
}

/** `POST …/sync`: due now. A paused integration stays paused (409 from the route). */
export async function requestSync(trx: Transaction<Database>, tenantId: string, integrationId: string): Promise<Integration | undefined> {
  const row = await trx
    .updateTable('integrations')
    .set({ sync_due_at: now() })
    .where('id', '=', integrationId)
    .where('tenant_id', '=', tenantId)
    .where('status', '=', 'active')
    .returningAll()
    .executeTakeFirst();
  return row && toIntegration(row);
}

const integrationsList = keysetList({ name: 'integrations', table: 'integrations', ...NEWEST_FIRST });

export async function listIntegrations(db: Kysely<Database>, tenantId: string, query: IntegrationListQuery) {
  const matching = db.selectFrom('integrations').where('tenant_id', '=', tenantId);
  return integrationsList.read({ query, rows: matching.selectAll(), count: matching, map: toIntegration });
}

/** The sync's writes, each only while its lease holds (a sync whose lease ran out writes nothing). */
export interface HeldIntegration {
  id: string;
  until: string;
}

/** Progress mid-sync: the cursor and counts after each page, so a crash resumes from there. */
export async function saveProgress(db: Kysely<Database>, held: HeldIntegration, changes: Partial<IntegrationsTable>): Promise<boolean> {
  const result = await db
    .updateTable('integrations')
    .set(changes)
    .where('id', '=', held.id)
    .where('sync_lease_until', '=', held.until)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Deals read from the CRM and written: each recorded once per integration, so that
 * `counts.dealsSynced` counts distinct deals however often one is read. Returns how many are new.
 */
export async function recordDealsRead(
  trx: Transaction<Database>,
  tenantId: string,
  integrationId: string,
  externalIds: string[],
): Promise<number> {
  if (externalIds.length === 0) return 0;
  const at = now();
  const inserted = await trx
    .insertInto('integration_deals')
    .values(
      [...new Set(externalIds)].map((externalId) => ({
        integration_id: integrationId,
        external_id: externalId,
        tenant_id: tenantId,
        read_at: at,
      })),
    )
    .onConflict((oc) => oc.columns(['integration_id', 'external_id']).doNothing())
    .returning('external_id')
    .execute();
  return inserted.length;
}

/** Leads the CRM accepted: recorded so they are never pushed again, with the count, while the lease holds. */
export async function recordPushed(db: Kysely<Database>, held: HeldIntegration, tenantId: string, leadIds: string[]): Promise<boolean> {
  if (leadIds.length === 0) return true;
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('integrations')
      .set((eb) => ({ leads_pushed: eb('leads_pushed', '+', leadIds.length) }))
      .where('id', '=', held.id)
      .where('sync_lease_until', '=', held.until)
      .executeTakeFirst();
    if (Number(row.numUpdatedRows) === 0) return false;
    const at = now();
    await trx
      .insertInto('integration_leads')
      .values(leadIds.map((leadId) => ({ integration_id: held.id, lead_id: leadId, tenant_id: tenantId, pushed_at: at })))
      .onConflict((oc) => oc.columns(['integration_id', 'lead_id']).doNothing())
      .execute();
    return true;
  });
}

/**
 * The outbox's `crm` consumer (events/consumers.ts): a form submitted makes its tenant's active
 * integrations due now, so a new lead reaches the CRM within a round of the sync rather than at its
 * next scheduled one. The push itself reads the leads not yet pushed to each integration
 * (leads.ts), so a CRM connected later still gets the leads made before it.
 */
export const leadsArrived: EventHandler = async (trx, events) => {
  const tenants = [...new Set(events.filter((e) => e.type === 'form.submitted').map((e) => e.tenant_id))];
  if (tenants.length === 0) return;
  // Unconditional: an integration syncing now keeps this later due past its release (`endSync`).
  await trx
    .updateTable('integrations')
    .set({ sync_due_at: now() })
    .where('tenant_id', 'in', tenants)
    .where('status', '=', 'active')
    .execute();
};

/**
 * When a sync that was claimed at due `dueWas` is next due: at `next`, unless it was made due
 * during the sync (a lead arrived, a sync was asked for: its due moved past `dueWas`), which stays,
 * so that what came in meanwhile is not left for `next`. An expression for the release (db/lease.ts).
 */
export const dueAfterSync = (dueWas: string, next: string) =>
  sql<string>`case when sync_due_at > ${dueWas} then sync_due_at else ${next} end`;

/** The CRM refused the credentials: paused with the reason, and `integration.failed`, in one transaction. */
export async function pauseRefused(db: Kysely<Database>, held: HeldIntegration, reason: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const at = now();
    const row = await trx
      .updateTable('integrations')
      .set({ status: 'paused', last_error: reason, last_error_at: at, updated_at: at, sync_lease_until: null })
      .where('id', '=', held.id)
      .where('sync_lease_until', '=', held.until)
      .returningAll()
      .executeTakeFirst();
    if (!row) return false;
    await emit(trx, row.tenant_id, 'integration.failed', toIntegration(row));
    return true;
  });
}
