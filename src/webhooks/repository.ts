import { randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Database, WebhookSubscriptionsTable } from '../db/types.js';
import { keysetList, NEWEST_FIRST } from '../http/pagination.js';
import { newId } from '../ids.js';
import { after, now } from '../time.js';
import type {
  WebhookSubscription,
  WebhookSubscriptionCreate,
  WebhookSubscriptionListQuery,
  WebhookSubscriptionWithSecret,
} from './schemas.js';
import { WebhookSubscriptionUpdate } from './schemas.js';
import { settle } from '../http/round-trip.js';
import { checkUrl, type UrlRules } from '../events/index.js';

const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export const toSubscription = (row: WebhookSubscriptionsTable): WebhookSubscription => ({
  subscriptionId: row.id,
  url: row.url,
  events: JSON.parse(row.events) as string[],
  active: row.active === 1,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** Standard Webhooks secrets: `whsec_` + base64 of 32 random bytes. */
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

export async function createSubscription(
  db: Kysely<Database>,
  tenantId: string,
  input: WebhookSubscriptionCreate,
  rules: UrlRules,
): Promise<WebhookSubscriptionWithSecret> {
  checkUrl(input.url, rules);
  const at = now();
  const row: WebhookSubscriptionsTable = {
    id: newId('whsub'),
    tenant_id: tenantId,
    url: input.url,
    events: JSON.stringify(input.events),
    active: input.active === false ? 0 : 1,
    secret: newSecret(),
    previous_secret: null,
    previous_secret_expires_at: null,
    created_at: at,
    updated_at: at,
    failing_since: null,
  };
  await db.insertInto('webhook_subscriptions').values(row).execute();
  return { ...toSubscription(row), secret: row.secret };
}

export function findSubscription(db: Kysely<Database>, tenantId: string, subscriptionId: string) {
  return db
    .selectFrom('webhook_subscriptions')
    .selectAll()
    .where('id', '=', subscriptionId)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
}

export async function updateSubscription(
  trx: Transaction<Database>,
  tenantId: string,
  subscriptionId: string,
  body: WebhookSubscriptionUpdate,
  rules: UrlRules,
) {
  const current = await findSubscription(trx, tenantId, subscriptionId);
  if (!current) return undefined;
  const shown = toSubscription(current);
  const patch = settle(WebhookSubscriptionUpdate, body, shown);
  if (Object.keys(patch).length === 0) return shown;
  if (patch.url !== undefined) checkUrl(patch.url, rules);
  const changes: Partial<WebhookSubscriptionsTable> = { updated_at: after(current.updated_at) };
  if (patch.url !== undefined) changes.url = patch.url;
  if (patch.events !== undefined) changes.events = JSON.stringify(patch.events);
  if (patch.active !== undefined) changes.active = patch.active ? 1 : 0;
  const row = await trx
    .updateTable('webhook_subscriptions')
    .set(changes)
    .where('id', '=', subscriptionId)
    .returningAll()
    .executeTakeFirstOrThrow();
  return toSubscription(row);
}

/** A new secret; deliveries are signed with both the new and the old one for the next 24 hours. */
export async function rotateSecret(
  trx: Transaction<Database>,
  tenantId: string,
  subscriptionId: string,
): Promise<WebhookSubscriptionWithSecret | undefined> {
  const current = await findSubscription(trx, tenantId, subscriptionId);
  if (!current) return undefined;
  const at = after(current.updated_at);
  const row = await trx
    .updateTable('webhook_subscriptions')
    .set({
      secret: newSecret(),
      previous_secret: current.secret,
      previous_secret_expires_at: new Date(Date.parse(at) + ROTATION_OVERLAP_MS).toISOString(),
      updated_at: at,
    })
    .where('id', '=', subscriptionId)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { ...toSubscription(row), secret: row.secret };
}

export async function deleteSubscription(db: Kysely<Database>, tenantId: string, subscriptionId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('webhook_subscriptions')
    .where('id', '=', subscriptionId)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

const subscriptionsList = keysetList({ name: 'webhook_subscriptions', table: 'webhook_subscriptions', ...NEWEST_FIRST });

/** As the reference says: `totalCount` is the number of subscriptions in this response. */
export async function listSubscriptions(db: Kysely<Database>, tenantId: string, query: WebhookSubscriptionListQuery) {
  const request = subscriptionsList.request(query);
  const rows = await db
    .selectFrom('webhook_subscriptions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .$call(subscriptionsList.apply(request))
    .execute();
  const result = subscriptionsList.toListPage({ request, rows, totalCount: 0, map: toSubscription });
  return { ...result, totalCount: result.items.length };
}
