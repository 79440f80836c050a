import type { ExpressionBuilder, Kysely, Transaction } from 'kysely';
import { textSearch } from '../db/search/index.js';
import { emit } from '../events/outbox.js';
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

/** A domain another account of the tenant has, in any case, is 409 at `/domain`. */
export async function createAccount(trx: Transaction<Database>, tenantId: string, input: AccountCreate): Promise<Account> {
  const createdAt = now();
  const row: AccountsTable = {
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
  await conflictIfTaken(trx.insertInto('accounts').values(row).execute(), domainTaken(input.domain));
  const account = await withLinkedCount(trx, row);
  await emit(trx, tenantId, 'account.created', account);
  return account;
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

/** The account and its logs; persons are untouched (they link by domain, not by id). */
export async function deleteAccount(trx: Transaction<Database>, current: AccountsTable): Promise<void> {
  const account = await withLinkedCount(trx, current);
  await trx.deleteFrom('account_logs').where('owner_id', '=', current.id).execute();
  await trx.deleteFrom('accounts').where('id', '=', current.id).execute();
  await emit(trx, current.tenant_id, 'account.deleted', account);
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
