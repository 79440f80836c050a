import type { Kysely, Transaction } from 'kysely';
import type { Database, LogsTable } from '../db/types.js';
import { newId } from '../ids.js';
import { now } from '../time.js';
import type { AccountLog, LogCreate, PersonLog } from './schemas.js';

/** Person logs and account logs: one shape, two tables, one code path. */
export type LogOwner = 'person' | 'account';
const LOGS = { person: 'person_logs', account: 'account_logs' } as const;
const OWNERS = { person: 'persons', account: 'accounts' } as const;
const LOG_ID_PREFIX = { person: 'personlog', account: 'accountlog' } as const;

export async function ownerExists(db: Kysely<Database>, owner: LogOwner, tenantId: string, ownerId: string): Promise<boolean> {
  const row = await db
    .selectFrom(OWNERS[owner])
    .select('id')
    .where('id', '=', ownerId)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  return row !== undefined;
}

export async function createLog(
  trx: Transaction<Database>,
  owner: LogOwner,
  tenantId: string,
  ownerId: string,
  input: LogCreate,
): Promise<LogsTable> {
  const row: LogsTable = {
    id: newId(LOG_ID_PREFIX[owner]),
    tenant_id: tenantId,
    owner_id: ownerId,
    source: input.source,
    type: input.type,
    payload: JSON.stringify(input.payload),
    idempotency_key: input.idempotencyKey ?? null,
    created_at: now(),
    updated_at: null,
    deleted_at: null,
  };
  await trx.insertInto(LOGS[owner]).values(row).execute();
  if (owner === 'account') {
    // An account's latest activity is its newest log or its own update, whichever is later.
    await trx
      .updateTable('accounts')
      .set({ latest_activity_at: row.created_at })
      .where('id', '=', ownerId)
      .where('latest_activity_at', '<', row.created_at)
      .execute();
  }
  return row;
}

export async function findLog(db: Kysely<Database>, owner: LogOwner, tenantId: string, ownerId: string, logId: string) {
  return db
    .selectFrom(LOGS[owner])
    .selectAll()
    .where('id', '=', logId)
    .where('owner_id', '=', ownerId)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
}

const common = (row: LogsTable) => ({
  source: row.source,
  type: row.type,
  payload: JSON.parse(row.payload) as Record<string, unknown>,
  idempotencyKey: row.idempotency_key,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  deletedAt: row.deleted_at,
});

export const toPersonLog = (row: LogsTable): PersonLog => ({ personId: row.owner_id, personLogId: row.id, ...common(row) });
export const toAccountLog = (row: LogsTable): AccountLog => ({ accountId: row.owner_id, accountLogId: row.id, ...common(row) });
