import type { Kysely } from 'kysely';
import { accountExists, accountIdOfDomain } from '../accounts/index.js';
import { noteChange } from '../db/changes.js';
import { isDnsName } from '../domains/index.js';
import type { Database, DealsTable } from '../db/types.js';
import { emit } from '../events/index.js';
import { AppError, type FieldError, invalidField } from '../http/errors.js';
import { keysetList, NEWEST_FIRST } from '../http/pagination.js';
import { newId } from '../ids.js';
import { after, now, toInstant } from '../time.js';
import type { Deal, DealInput, DealListQuery } from './schemas.js';

export const toDeal = (row: DealsTable): Deal => ({
  dealId: row.id,
  source: row.source,
  externalId: row.external_id,
  name: row.name,
  amount: Number(row.amount_cents) / 100,
  currency: row.currency,
  stage: row.stage,
  accountId: row.account_id,
  accountDomain: row.account_domain,
  matched: row.account_id !== null,
  createdAt: row.created_at,
  closedAt: row.closed_at,
  updatedAt: row.updated_at,
});

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

/** The amount in hundredths; more than 2 decimals is a 400 (the shortest decimal form is what the client wrote). */
export function toCents(amount: number, path = '/amount'): number {
  if (!/^\d+(\.\d{1,2})?$/.test(String(amount))) throw invalidField(path, 'has more than 2 decimals');
  return Math.round(amount * 100);
}

function checkCurrency(currency: string, path = '/currency'): string {
  if (!CURRENCIES.has(currency)) throw invalidField(path, 'is not an ISO 4217 currency code (upper case, e.g. EUR)');
  return currency;
}

export function instant(value: string, path: string, roundUp = false): string {
  const iso = toInstant(value, roundUp);
  if (iso === undefined) throw invalidField(path, 'is not a date-time of years 0001-9999 in UTC');
  return iso;
}

/**
 * Where a deal comes from decides how strictly its input is read. A client of the API is told of a
 * mistake (400 at the field). A CRM's record is kept as the CRM has it: a close date there is often
 * a date alone (Salesforce's `CloseDate`), before the creation time of a deal closed that same day,
 * and a website that is no host name matches no account, so it is kept as none.
 */
export interface DealRules {
  fromApi: boolean;
}
const CRM_RULES: DealRules = { fromApi: false };

const NOT_A_HOST = 'must be a host name such as acme.com: no scheme, port, path or IP address';

function checkDomain(domain: string | null | undefined, rules: DealRules): string | null {
  if (domain === undefined || domain === null) return null;
  if (isDnsName(domain)) return domain;
  if (rules.fromApi) throw invalidField('/accountDomain', NOT_A_HOST);
  return null;
}

/** The account a deal is matched to: the one given (it must be the tenant's), else the one with its domain, else none. */
async function matchAccount(db: Kysely<Database>, tenantId: string, input: DealInput, domain: string | null): Promise<string | null> {
  if (input.accountId !== undefined && input.accountId !== null) {
    if (!(await accountExists(db, tenantId, input.accountId))) throw invalidField('/accountId', 'is not an account of this tenant');
    return input.accountId;
  }
  if (domain === null) return null;
  return (await accountIdOfDomain(db, tenantId, domain.toLowerCase())) ?? null;
}

/** The stored values a deal input stands for; every bad field is named in one 400, each at its pointer. */
async function dealValues(db: Kysely<Database>, tenantId: string, input: DealInput, rules: DealRules) {
  const errors: FieldError[] = [];
  const checked = <T>(check: () => T, fallback: T): T => {
    try {
      return check();
    } catch (err) {
      if (!(err instanceof AppError) || !err.errors) throw err;
      errors.push(...err.errors);
      return fallback;
    }
  };
  const values = {
    name: input.name,
    amount_cents: checked(() => toCents(input.amount), 0),
    currency: checked(() => checkCurrency(input.currency), ''),
    stage: input.stage,
    account_id: null as string | null,
    account_domain: checked(() => checkDomain(input.accountDomain, rules), null),
    created_at: checked(() => instant(input.createdAt, '/createdAt'), ''),
    closed_at:
      input.closedAt === undefined || input.closedAt === null ? null : checked(() => instant(input.closedAt as string, '/closedAt'), null),
  };
  // Both are instants of one form (toInstant), so their text orders as their time does.
  if (rules.fromApi && values.closed_at !== null && values.created_at !== '' && values.closed_at < values.created_at) {
    errors.push({ path: '/closedAt', message: `is before createdAt (${values.created_at}): a deal closes after it is created` });
  }
  try {
    values.account_id = await matchAccount(db, tenantId, input, values.account_domain);
  } catch (err) {
    if (!(err instanceof AppError) || !err.errors) throw err;
    errors.push(...err.errors);
  }
  if (errors.length > 0) throw new AppError('validation_failed', errors.map((e) => `${e.path} ${e.message}`).join('; '), errors);
  return values;
}
type DealValues = Awaited<ReturnType<typeof dealValues>>;

const sameValues = (row: DealsTable, values: DealValues): boolean =>
  (Object.keys(values) as (keyof DealValues)[]).every((k) => (k === 'amount_cents' ? Number(row[k]) === values[k] : row[k] === values[k]));

/**
 * Creates or updates the tenant's deal `(input.source, input.externalId)`: the CRM syncs call this,
 * as `POST /v0/deals` does. Run it in a transaction (one is opened when `db` is not one), so the
 * deal and its `deal.created` / `deal.updated` event commit together. An update that changes
 * nothing emits nothing and keeps `updatedAt`. Bad input throws the AppError of `POST /v0/deals`
 * (400 at the field's pointer). The account is matched anew on every upsert.
 */
export async function upsertDeal(
  db: Kysely<Database>,
  tenantId: string,
  input: DealInput,
  rules: DealRules = CRM_RULES,
): Promise<{ deal: Deal; created: boolean }> {
  if (!db.isTransaction) return db.transaction().execute((trx) => upsertDeal(trx, tenantId, input, rules));
  const values = await dealValues(db, tenantId, input, rules);
  const at = now();
  const row: DealsTable = {
    id: newId('deal'),
    tenant_id: tenantId,
    source: input.source,
    external_id: input.externalId,
    ...values,
    recorded_at: at,
    updated_at: at,
  };
  // Insert-if-absent: two writers of one new deal at once make one row; the second updates it.
  const inserted = await db
    .insertInto('deals')
    .values(row)
    .onConflict((oc) => oc.columns(['tenant_id', 'source', 'external_id']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) {
    await noteChange(db, `deals:${tenantId}`);
    const deal = toDeal(inserted);
    await emit(db, tenantId, 'deal.created', deal);
    return { deal, created: true };
  }
  const current = await findDealByExternalId(db, tenantId, input.source, input.externalId);
  if (!current) throw new Error('deal vanished between its insert and its read');
  if (sameValues(current, values)) return { deal: toDeal(current), created: false };
  await noteChange(db, `deals:${tenantId}`);
  const updated = await db
    .updateTable('deals')
    .set({ ...values, updated_at: after(current.updated_at) })
    .where('id', '=', current.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  const deal = toDeal(updated);
  await emit(db, tenantId, 'deal.updated', deal);
  return { deal, created: false };
}

export function findDealByExternalId(db: Kysely<Database>, tenantId: string, source: DealsTable['source'], externalId: string) {
  return db
    .selectFrom('deals')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('source', '=', source)
    .where('external_id', '=', externalId)
    .executeTakeFirst();
}

export function findDeal(db: Kysely<Database>, tenantId: string, dealId: string) {
  return db.selectFrom('deals').selectAll().where('id', '=', dealId).where('tenant_id', '=', tenantId).executeTakeFirst();
}

/** Deletes the deal and emits `deal.deleted` with the deal as it was; run in a transaction. */
export async function deleteDeal(db: Kysely<Database>, current: DealsTable): Promise<void> {
  await noteChange(db, `deals:${current.tenant_id}`);
  await db.deleteFrom('deals').where('id', '=', current.id).execute();
  await emit(db, current.tenant_id, 'deal.deleted', toDeal(current));
}

const dealsList = keysetList({ name: 'deals', table: 'deals', ...NEWEST_FIRST });

/** Newest first by the deal's `createdAt`; `startDate` inclusive, `endDate` exclusive. */
export async function listDeals(db: Kysely<Database>, tenantId: string, query: DealListQuery) {
  const start = query.startDate === undefined ? undefined : instant(query.startDate, '/startDate', true);
  const end = query.endDate === undefined ? undefined : instant(query.endDate, '/endDate', true);
  if (start !== undefined && end !== undefined && start > end) throw invalidField('/startDate', 'is after endDate');
  const filters = { source: query.source, stage: query.stage, accountId: query.accountId, start, end };
  const matching = db
    .selectFrom('deals')
    .where('tenant_id', '=', tenantId)
    .$call((q) => (filters.source === undefined ? q : q.where('source', '=', filters.source)))
    .$call((q) => (filters.stage === undefined ? q : q.where('stage', '=', filters.stage)))
    .$call((q) => (filters.accountId === undefined ? q : q.where('account_id', '=', filters.accountId)))
    .$call((q) => (start === undefined ? q : q.where('created_at', '>=', start)))
    .$call((q) => (end === undefined ? q : q.where('created_at', '<', end)));
  return dealsList.read({ query, filters, rows: matching.selectAll(), count: matching, map: toDeal });
}
