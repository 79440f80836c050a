import type { ExpressionBuilder, Kysely, Transaction } from 'kysely';
import { textSearch } from '../db/search/index.js';
import { emit } from '../events/index.js';
import type { AccountsTable, Database } from '../db/types.js';
import { keysetList, NEWEST_FIRST } from '../http/pagination.js';
import { conflictIfTaken } from '../http/errors.js';
import { newId } from '../ids.js';
import { after, now } from '../time.js';
import { settle } from '../http/round-trip.js';
import type { Account, AccountCreate, AccountSearchQuery } from './schemas.js';
import { AccountUpdate } from './schemas.js';

type AccountRow = AccountsTable & { linked_persons_count: number | string | bigint | null };

export const toAccount = (row: AccountRow): Account => ({
  accountId: row.id,
  domain: row.domain,
  name: row.name,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  latestActivityAt: row.latest_activity_at,
  linkedPersonsCount: Number(row.linked_persons_count),
});

/** The persons linked to the account of the outer query (served by the persons domain index). */
const linkedPersons = (eb: ExpressionBuilder<Database, 'accounts'>) =>
  eb
    .selectFrom('persons')
    .whereRef('persons.tenant_id', '=', 'accounts.tenant_id')
    .whereRef('persons.domain_lc', '=', 'accounts.domain_lc');

/** A new account's row: names and domains kept lowercased beside them, for search and linking. */
function newAccountRow(tenantId: string, input: AccountCreate): AccountsTable {
  const createdAt = now();
  return {
    id: newId('account'),
    tenant_id: tenantId,
    name: input.name,
    name_lc: input.name.toLowerCase(),
    domain: input.domain,
    domain_lc: input.domain.toLowerCase(),
    created_at: createdAt,
    updated_at: createdAt,
    latest_activity_at: createdAt,
  };
}

/** A domain another account of the tenant has, in any case, is 409 at `/domain`. */
export async function createAccount(trx: Transaction<Database>, tenantId: string, input: AccountCreate): Promise<Account> {
  const row = newAccountRow(tenantId, input);
  await conflictIfTaken(trx.insertInto('accounts').values(row).execute(), domainTaken(input.domain));
  const account = await withLinkedCount(trx, row);
  await emit(trx, tenantId, 'account.created', account);
  return account;
}

/**
 * The tenant's account of a domain (ignoring case), made with `name` when there is none (issue 39:
 * a lead's email domain). One conditional insert, so two leads of a new domain at once, or a lead
 * and the API, make one account and neither fails; `account.created` only for the one made.
 */
export async function accountOfDomain(
  trx: Transaction<Database>,
  tenantId: string,
  input: AccountCreate,
): Promise<{ accountId: string; created: boolean }> {
  const row = newAccountRow(tenantId, input);
  const made = await trx
    .insertInto('accounts')
    .values(row)
    .onConflict((oc) => oc.columns(['tenant_id', 'domain_lc']).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (made) {
    await emit(trx, tenantId, 'account.created', await withLinkedCount(trx, row));
    return { accountId: made.id, created: true };
  }
  const found = await trx
    .selectFrom('accounts')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('domain_lc', '=', row.domain_lc)
    .executeTakeFirstOrThrow();
  return { accountId: found.id, created: false };
}

const domainTaken = (domain: string) => ({
  path: '/domain',
  message: 'is already the domain of another account',
  detail: `An account with domain "${domain}" already exists`,
});

async function withLinkedCount(db: Kysely<Database>, row: AccountsTable): Promise<Account> {
  const count = await db
    .selectFrom('persons')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('tenant_id', '=', row.tenant_id)
    .where('domain_lc', '=', row.domain_lc)
    .executeTakeFirstOrThrow();
  return toAccount({ ...row, linked_persons_count: count.n });
}

export function findAccount(db: Kysely<Database>, tenantId: string, accountId: string) {
  return db.selectFrom('accounts').selectAll().where('id', '=', accountId).where('tenant_id', '=', tenantId).executeTakeFirst();
}

export async function getAccount(db: Kysely<Database>, tenantId: string, accountId: string): Promise<Account | undefined> {
  const row = await findAccount(db, tenantId, accountId);
  return row && withLinkedCount(db, row);
}

/**
 * Only the fields present change. Persons link to an account by domain at read time, so a new
 * domain relinks them at once. An update is activity: `latestActivityAt` moves with `updatedAt`.
 */
export async function updateAccount(trx: Transaction<Database>, current: AccountsTable, body: AccountUpdate): Promise<Account> {
  const shown = await withLinkedCount(trx, current);
  const patch = settle(AccountUpdate, body, shown);
  const changes: Partial<AccountsTable> = {};
  if (patch.name !== undefined) {
    changes.name = patch.name;
    changes.name_lc = patch.name.toLowerCase();
  }
  if (patch.domain !== undefined) {
    changes.domain = patch.domain;
    changes.domain_lc = patch.domain.toLowerCase();
  }
  if (Object.keys(changes).length === 0) return shown;
  changes.updated_at = after(current.updated_at);
  // ISO timestamps compare as text; the later of the update and the newest log.
  if (changes.updated_at > current.latest_activity_at) changes.latest_activity_at = changes.updated_at;
  const row = await conflictIfTaken(
    trx.updateTable('accounts').set(changes).where('id', '=', current.id).returningAll().executeTakeFirstOrThrow(),
    domainTaken(patch.domain ?? current.domain),
  );
  const account = await withLinkedCount(trx, row);
  await emit(trx, current.tenant_id, 'account.updated', account);
  return account;
}

/**
 * How an account's logs go with it: the logs area's function (logs/repository.ts), handed in by
 * app.ts, since logs import accounts and not the other way.
 */
export type DropAccountLogs = (trx: Transaction<Database>, tenantId: string, accountId: string) => Promise<void>;

/** The account and its logs; persons are untouched (they link by domain, not by id). */
export async function deleteAccount(trx: Transaction<Database>, current: AccountsTable, dropLogs: DropAccountLogs): Promise<void> {
  const account = await withLinkedCount(trx, current);
  await dropLogs(trx, current.tenant_id, current.id);
  await trx.deleteFrom('accounts').where('id', '=', current.id).execute();
  await emit(trx, current.tenant_id, 'account.deleted', account);
}

/** A new log entry at `at` is the account's latest activity, unless something later is. */
export async function noteAccountActivity(trx: Transaction<Database>, accountId: string, at: string): Promise<void> {
  await trx
    .updateTable('accounts')
    .set({ latest_activity_at: at })
    .where('id', '=', accountId)
    .where('latest_activity_at', '<', at)
    .execute();
}

export async function accountExists(db: Kysely<Database>, tenantId: string, accountId: string): Promise<boolean> {
  return Boolean(
    await db.selectFrom('accounts').select('id').where('id', '=', accountId).where('tenant_id', '=', tenantId).executeTakeFirst(),
  );
}

const accountsList = keysetList({ name: 'accounts', table: 'accounts', ...NEWEST_FIRST });

/** Accounts whose name or domain contains the text, newest first; `includeEmptyOnly`: those no person links to. */
export async function searchAccounts(db: Kysely<Database>, tenantId: string, query: AccountSearchQuery) {
  const text = (query.query ?? '').toLowerCase();
  const emptyOnly = query.includeEmptyOnly === 'true';
  const request = accountsList.request(query, { filters: { text, emptyOnly } });
  const { rows, totalCount } = await textSearch(db, {
    table: 'accounts',
    scope: { column: 'tenant_id', id: tenantId },
    columns: ['name_lc', 'domain_lc'],
    text,
    order: { newestFirst: (sameOrder) => accountsList.apply(request, sameOrder) },
    page: request,
    filter: (q) => (emptyOnly ? q.where((eb) => eb.not(eb.exists(linkedPersons(eb).select('persons.id')))) : q),
    // The counts do not follow persons: the empty-accounts filter is counted by visiting its matches.
    counted: emptyOnly ? undefined : { asked: [''], all: [''] },
    select: (q) =>
      q.selectAll('accounts').select((eb) =>
        linkedPersons(eb)
          .select((p) => p.fn.countAll().as('n'))
          .as('linked_persons_count'),
      ),
  });
  return accountsList.toListPage({ request, rows, totalCount, map: toAccount });
}

/** The account a person belongs to: the tenant's account of the person's domain (the lowest id when several). */
export async function accountOfPerson(db: Kysely<Database>, tenantId: string, personId: string): Promise<string | null> {
  const row = await db
    .selectFrom('persons')
    .innerJoin('accounts', (join) =>
      join.onRef('accounts.domain_lc', '=', 'persons.domain_lc').onRef('accounts.tenant_id', '=', 'persons.tenant_id'),
    )
    .select('accounts.id')
    .where('persons.tenant_id', '=', tenantId)
    .where('persons.id', '=', personId)
    .orderBy('accounts.id')
    .limit(1)
    .executeTakeFirst();
  return row?.id ?? null;
}

/** The accounts of these tenants whose domain is one of `domains` (a person's account is the one of its domain). */
export async function accountRowsOfDomains(
  db: Kysely<Database>,
  tenantIds: readonly string[],
  domains: readonly string[],
): Promise<AccountsTable[]> {
  if (tenantIds.length === 0 || domains.length === 0) return [];
  return db.selectFrom('accounts').selectAll().where('tenant_id', 'in', tenantIds).where('domain_lc', 'in', domains).execute();
}

/** Which of `ids` are accounts of the tenant. */
export async function accountIdsAmong(db: Kysely<Database>, tenantId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('accounts').select('id').where('tenant_id', '=', tenantId).where('id', 'in', ids).execute();
  return new Set(rows.map((r) => r.id));
}

/** The name of the tenant's account of this domain (any case), if any: a person's company as a page shows it. */
export async function accountNameOfDomain(db: Kysely<Database>, tenantId: string, domain: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('accounts')
    .select('name')
    .where('tenant_id', '=', tenantId)
    .where('domain_lc', '=', domain.toLowerCase())
    .executeTakeFirst();
  return row?.name;
}

/** The id of the tenant's account with this lowercased domain, if any. */
export async function accountIdOfDomain(db: Kysely<Database>, tenantId: string, domainLc: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('accounts')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('domain_lc', '=', domainLc)
    .executeTakeFirst();
  return row?.id;
}

/** The name of the tenant's account, if it is there. */
export async function accountNameOf(db: Kysely<Database>, tenantId: string, accountId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('accounts')
    .select('name')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', accountId)
    .executeTakeFirst();
  return row?.name;
}
