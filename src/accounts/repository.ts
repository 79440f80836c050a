import type { ExpressionBuilder, Kysely, Transaction } from 'kysely';
import { indexable, scopeEquals, searchWithTotal, substringMatch, type SearchPlan } from '../db/search.js';
import { emit } from '../events/outbox.js';
import type { AccountsTable, Database } from '../db/types.js';
import { countRows, keysetList, NEWEST_FIRST } from '../http/pagination.js';
import { conflictIfTaken } from '../http/errors.js';
import { newId } from '../ids.js';
import { now } from '../time.js';
import type { Account, AccountCreate, AccountSearchQuery } from './schemas.js';

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
  await conflictIfTaken(trx.insertInto('accounts').values(row).execute(), {
    path: '/domain',
    message: 'is already the domain of another account',
    detail: `An account with domain "${input.domain}" already exists`,
  });
  const count = await trx
    .selectFrom('persons')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('tenant_id', '=', tenantId)
    .where('domain_lc', '=', row.domain_lc)
    .executeTakeFirstOrThrow();
  const account = toAccount({ ...row, linked_persons_count: count.n });
  await emit(trx, tenantId, 'account.created', account);
  return account;
}

export async function accountExists(db: Kysely<Database>, tenantId: string, accountId: string): Promise<boolean> {
  return Boolean(
    await db.selectFrom('accounts').select('id').where('id', '=', accountId).where('tenant_id', '=', tenantId).executeTakeFirst(),
  );
}

const accountsList = keysetList({ name: 'accounts', table: 'accounts', ...NEWEST_FIRST });

export async function searchAccounts(db: Kysely<Database>, tenantId: string, query: AccountSearchQuery) {
  const text = (query.query ?? '').toLowerCase();
  const emptyOnly = query.includeEmptyOnly === 'true';
  const filters = { text, emptyOnly };
  const request = accountsList.request(query, { filters });

  const matching = (plan: SearchPlan) =>
    db
      .selectFrom('accounts')
      .where(scopeEquals(db, 'accounts.tenant_id', tenantId, plan.driven))
      .$if(text !== '', (q) => q.where(substringMatch(db, 'accounts', ['name_lc', 'domain_lc'], text, plan.substringIndex)))
      .$if(emptyOnly, (q) => q.where((eb) => eb.not(eb.exists(linkedPersons(eb).select('persons.id')))));

  const [rows, totalCount] = await searchWithTotal(
    db,
    indexable(text),
    (plan) =>
      matching(plan)
        .selectAll('accounts')
        .select((eb) =>
          linkedPersons(eb)
            .select((p) => p.fn.countAll().as('n'))
            .as('linked_persons_count'),
        )
        .$call(accountsList.apply(request))
        .execute(),
    (plan) => countRows(matching(plan)),
  );
  return accountsList.toListPage({ request, rows, totalCount, map: toAccount });
}
