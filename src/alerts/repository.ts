import type { Kysely, Transaction } from 'kysely';
import type { AlertMessagesTable, AlertsTable, Database } from '../db/types.js';
import { AppError, type FieldError } from '../http/errors.js';
import { keysetList, NEWEST_FIRST } from '../http/pagination.js';
import { settle } from '../http/round-trip.js';
import { newId } from '../ids.js';
import { after, now } from '../time.js';
import { checkUrl, type UrlRules } from '../webhooks/repository.js';
import {
  type Alert,
  type AlertCreate,
  type AlertEvent,
  type AlertListQuery,
  type AlertMessage,
  type AlertMessageListQuery,
  AlertUpdate,
} from './schemas.js';

const ids = (json: string | null): string[] | null => (json === null ? null : (JSON.parse(json) as string[]));
const idsJson = (list: readonly string[] | null | undefined): string | null => (list ? JSON.stringify(list) : null);

export const toAlert = (row: AlertsTable): Alert => ({
  alertId: row.id,
  name: row.name,
  channel: { type: 'slack', webhookUrl: row.webhook_url },
  when: {
    event: row.event as AlertEvent,
    accountIds: ids(row.account_ids),
    segmentIds: ids(row.segment_ids),
    pageIds: ids(row.page_ids),
  },
  active: row.active === 1,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export const toAlertMessage = (row: AlertMessagesTable): AlertMessage => ({
  messageId: row.id,
  eventType: row.event_type,
  status: row.status,
  attempts: row.attempts,
  more: row.more,
  lastAttemptAt: row.last_attempt_at,
  nextAttemptAt: row.next_attempt_at,
  lastResponseStatus: row.last_response_status,
  lastError: row.last_error,
  createdAt: row.created_at,
});

type When = AlertCreate['when'];

/** Every id an alert names must be the tenant's: 400 at each one that is not, all at once. */
async function checkIds(db: Kysely<Database>, tenantId: string, when: When): Promise<void> {
  const errors: FieldError[] = [];
  const check = async (field: 'accountIds' | 'segmentIds' | 'pageIds', table: 'accounts' | 'audiences' | 'pages', what: string) => {
    const wanted = when[field];
    if (!wanted || wanted.length === 0) return;
    const found = new Set(
      (await db.selectFrom(table).select('id').where('tenant_id', '=', tenantId).where('id', 'in', wanted).execute()).map((r) => r.id),
    );
    wanted.forEach((id, i) => {
      if (!found.has(id)) errors.push({ path: `/when/${field}/${i}`, message: `is not one of this tenant's ${what}` });
    });
  };
  await check('accountIds', 'accounts', 'accounts');
  await check('segmentIds', 'audiences', 'audiences');
  await check('pageIds', 'pages', 'pages');
  if (errors.length > 0) throw new AppError('validation_failed', errors.map((e) => `${e.path} ${e.message}`).join('; '), errors);
}

export async function createAlert(db: Kysely<Database>, tenantId: string, input: AlertCreate, rules: UrlRules): Promise<Alert> {
  checkUrl(input.channel.webhookUrl, rules, '/channel/webhookUrl');
  await checkIds(db, tenantId, input.when);
  const at = now();
  const row: AlertsTable = {
    id: newId('alert'),
    tenant_id: tenantId,
    name: input.name,
    webhook_url: input.channel.webhookUrl,
    event: input.when.event,
    account_ids: idsJson(input.when.accountIds),
    segment_ids: idsJson(input.when.segmentIds),
    page_ids: idsJson(input.when.pageIds),
    active: input.active === false ? 0 : 1,
    created_at: at,
    updated_at: at,
  };
  await db.insertInto('alerts').values(row).execute();
  return toAlert(row);
}

export function findAlert(db: Kysely<Database>, tenantId: string, alertId: string) {
  return db.selectFrom('alerts').selectAll().where('id', '=', alertId).where('tenant_id', '=', tenantId).executeTakeFirst();
}

export async function updateAlert(
  trx: Transaction<Database>,
  tenantId: string,
  alertId: string,
  body: AlertUpdate,
  rules: UrlRules,
): Promise<Alert | undefined> {
  const current = await findAlert(trx, tenantId, alertId);
  if (!current) return undefined;
  const shown = toAlert(current);
  const patch = settle(AlertUpdate, body, shown);
  if (Object.keys(patch).length === 0) return shown;
  if (patch.channel !== undefined) checkUrl(patch.channel.webhookUrl, rules, '/channel/webhookUrl');
  if (patch.when !== undefined) await checkIds(trx, tenantId, patch.when);
  const changes: Partial<AlertsTable> = { updated_at: after(current.updated_at) };
  if (patch.name !== undefined) changes.name = patch.name;
  if (patch.channel !== undefined) changes.webhook_url = patch.channel.webhookUrl;
  if (patch.when !== undefined) {
    changes.event = patch.when.event;
    changes.account_ids = idsJson(patch.when.accountIds);
    changes.segment_ids = idsJson(patch.when.segmentIds);
    changes.page_ids = idsJson(patch.when.pageIds);
  }
  if (patch.active !== undefined) changes.active = patch.active ? 1 : 0;
  const row = await trx.updateTable('alerts').set(changes).where('id', '=', alertId).returningAll().executeTakeFirstOrThrow();
  return toAlert(row);
}

export async function deleteAlert(db: Kysely<Database>, tenantId: string, alertId: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    if (!(await findAlert(trx, tenantId, alertId))) return false;
    // Its windows and messages first: SQLite and PostgreSQL alike, whatever the foreign keys do.
    await trx.deleteFrom('alert_messages').where('alert_id', '=', alertId).execute();
    await trx.deleteFrom('alert_windows').where('alert_id', '=', alertId).execute();
    await trx.deleteFrom('alerts').where('id', '=', alertId).execute();
    return true;
  });
}

const alertsList = keysetList({ name: 'alerts', table: 'alerts', ...NEWEST_FIRST });

export function listAlerts(db: Kysely<Database>, tenantId: string, query: AlertListQuery) {
  const ofTenant = db.selectFrom('alerts').where('tenant_id', '=', tenantId);
  return alertsList.read({ query, rows: ofTenant.selectAll(), count: ofTenant, map: toAlert });
}

const messagesList = keysetList({ name: 'alert_messages', table: 'alert_messages', ...NEWEST_FIRST });

export function listMessages(db: Kysely<Database>, alert: AlertsTable, query: AlertMessageListQuery) {
  const ofAlert = db.selectFrom('alert_messages').where('alert_id', '=', alert.id);
  return messagesList.read({ query, within: alert.id, rows: ofAlert.selectAll(), count: ofAlert, map: toAlertMessage });
}

/** A message to send now, made by a matching event (fan-out.ts) or by `POST …/test`. */
export function newMessage(alert: AlertsTable, eventType: string, facts: object, more: number, at = now()): AlertMessagesTable {
  return {
    id: newId('alertmsg'),
    tenant_id: alert.tenant_id,
    alert_id: alert.id,
    event_type: eventType,
    facts: JSON.stringify(facts),
    more,
    status: 'pending',
    attempts: 0,
    next_attempt_at: at,
    last_attempt_at: null,
    last_response_status: null,
    last_error: null,
    lease_until: null,
    created_at: at,
  };
}

export async function sendTestMessage(db: Kysely<Database>, alert: AlertsTable): Promise<AlertMessage> {
  const row = newMessage(alert, 'alert.test', { test: true }, 0);
  await db.insertInto('alert_messages').values(row).execute();
  return toAlertMessage(row);
}
