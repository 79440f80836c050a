import type { Kysely, Transaction } from 'kysely';
import { accountIdsAmong } from '../accounts/index.js';
import { audienceIdsAmong } from '../audiences/index.js';
import type { AlertMessagesTable, AlertsTable, Database } from '../db/types.js';
import { pageIdsAmong } from '../pages/index.js';
import { AppError, type FieldError } from '../http/errors.js';
import { keysetList, NEWEST_FIRST } from '../http/pagination.js';
import { settle } from '../http/round-trip.js';
import { firstAttempt, checkUrl, type UrlRules } from '../events/index.js';
import { newId } from '../ids.js';
import { after, now } from '../time.js';
import { type Sealer, secretNotConfigured } from '../integrations/index.js';
import { maskedWebhookUrl } from './webhook-url.js';
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
  // A secret: never returned, only its masked form (alerts/webhook-url.ts).
  channel: { type: 'slack', webhookUrl: row.webhook_url_shown },
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

/** Which of the ids are the tenant's rows of one owner's table (that owner's function). */
type IdsAmong = (db: Kysely<Database>, tenantId: string, ids: readonly string[]) => Promise<Set<string>>;

/** Every id an alert names must be the tenant's: 400 at each one that is not, all at once. */
async function checkIds(db: Kysely<Database>, tenantId: string, when: When): Promise<void> {
  const errors: FieldError[] = [];
  const check = async (field: 'accountIds' | 'segmentIds' | 'pageIds', among: IdsAmong, what: string) => {
    const wanted = when[field];
    if (!wanted || wanted.length === 0) return;
    const found = await among(db, tenantId, wanted);
    wanted.forEach((id, i) => {
      if (!found.has(id)) errors.push({ path: `/when/${field}/${i}`, message: `is not one of this tenant's ${what}` });
    });
  };
  await check('accountIds', accountIdsAmong, 'accounts');
  await check('segmentIds', audienceIdsAmong, 'audiences');
  await check('pageIds', pageIdsAmong, 'pages');
  if (errors.length > 0) throw new AppError('validation_failed', errors.map((e) => `${e.path} ${e.message}`).join('; '), errors);
}

/** The alert's webhook URL sealed with its id, and the masked form the API shows. */
const sealedUrl = (sealer: Sealer, alertId: string, url: string) => ({
  webhook_url: '',
  webhook_url_sealed: sealer.sealText(alertId, url),
  webhook_url_shown: maskedWebhookUrl(url),
});

export async function createAlert(
  db: Kysely<Database>,
  tenantId: string,
  input: AlertCreate,
  rules: UrlRules,
  sealer: Sealer,
): Promise<Alert> {
  // Refused before anything else: without a key the URL would have to be kept in the clear.
  if (!sealer.canSeal) throw secretNotConfigured();
  checkUrl(input.channel.webhookUrl, rules, '/channel/webhookUrl');
  await checkIds(db, tenantId, input.when);
  const at = now();
  const id = newId('alert');
  const row: AlertsTable = {
    id,
    tenant_id: tenantId,
    name: input.name,
    ...sealedUrl(sealer, id, input.channel.webhookUrl),
    test_sent_at: null,
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
  sealer: Sealer,
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
  if (patch.channel !== undefined) Object.assign(changes, sealedUrl(sealer, current.id, patch.channel.webhookUrl));
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
    ...firstAttempt(at),
  };
}

/** One test message a minute per alert: a test is for seeing the channel work, not for sending many. */
export const TEST_EVERY_MS = 60_000;

export async function sendTestMessage(db: Kysely<Database>, alert: AlertsTable): Promise<AlertMessage> {
  const at = now();
  const since = new Date(Date.parse(at) - TEST_EVERY_MS).toISOString();
  // One statement decides, so two tests at once cannot both pass.
  const claimed = await db
    .updateTable('alerts')
    .set({ test_sent_at: at })
    .where('id', '=', alert.id)
    .where((eb) => eb.or([eb('test_sent_at', 'is', null), eb('test_sent_at', '<=', since)]))
    .returning('test_sent_at')
    .executeTakeFirst();
  if (!claimed) {
    const last = await db.selectFrom('alerts').select('test_sent_at').where('id', '=', alert.id).executeTakeFirst();
    const wait = Math.max(1, Math.ceil((Date.parse(last?.test_sent_at ?? at) + TEST_EVERY_MS - Date.parse(at)) / 1000));
    throw new AppError(
      'rate_limited',
      `A test message was sent less than a minute ago: one a minute per alert, the next in ${wait} s`,
      undefined,
      {
        'retry-after': String(wait),
      },
    );
  }
  const row = newMessage(alert, 'alert.test', { test: true }, 0, at);
  await db.insertInto('alert_messages').values(row).execute();
  return toAlertMessage(row);
}

/**
 * The webhook URLs stored in the clear before issue 45, sealed at start (the key is the service's
 * configuration, which migrations never read). Returns how many are still in the clear: all of
 * them when there is no key to seal with (PostgreSQL without INTEGRATIONS_SECRET), which app.ts
 * says in the log; they keep working until then.
 */
export async function sealStoredWebhookUrls(db: Kysely<Database>, sealer: Sealer): Promise<number> {
  const clear = await db.selectFrom('alerts').select(['id', 'webhook_url']).where('webhook_url', '!=', '').execute();
  if (!sealer.canSeal) return clear.length;
  for (const row of clear) {
    await db
      .updateTable('alerts')
      .set(sealedUrl(sealer, row.id, row.webhook_url))
      .where('id', '=', row.id)
      .where('webhook_url', '=', row.webhook_url)
      .execute();
  }
  return 0;
}

/** The URL to send to: sealed, or (until sealed at start) stored in the clear; undefined when it does not open. */
export function webhookUrlOf(alert: AlertsTable, sealer: Sealer): string | undefined {
  if (alert.webhook_url !== '') return alert.webhook_url;
  return alert.webhook_url_sealed === null ? undefined : sealer.openText(alert.id, alert.webhook_url_sealed);
}
