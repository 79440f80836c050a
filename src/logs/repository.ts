import { sql, type Kysely, type Transaction } from 'kysely';
import { noteAccountActivity } from '../accounts/index.js';
import type { Database, LogsTable } from '../db/types.js';
import { newId } from '../ids.js';
import { conflict, invalidField } from '../http/errors.js';
import { keysetList, NEWEST_FIRST } from '../http/pagination.js';
import { after, now, toInstant } from '../time.js';
import type { Mentions } from '../db/mentions.js';
import type { AccountLog, LogCreate, LogListQuery, PersonLog } from './schemas.js';

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
    await noteAccountActivity(trx, ownerId, row.created_at);
  }
  return row;
}

/** Every log entry of the person or account, which is going (deleted, or erased). */
export async function deleteLogsOf(trx: Transaction<Database>, owner: LogOwner, tenantId: string, ownerId: string): Promise<void> {
  await trx.deleteFrom(LOGS[owner]).where('tenant_id', '=', tenantId).where('owner_id', '=', ownerId).execute();
}

/** What a visitor typed in a lead form's log entry (src/site/forms/leads.ts): one mentioning a person makes the others theirs too. */
const TYPED = ['name', 'email', 'phone'] as const;

/**
 * A person's erasure (src/persons/erasure.ts): a lead form's entry in another person's log (a
 * visitor typed the erased person's details on that person's link) keeps the entry and loses what
 * was typed ('' each), as the visit's session does.
 */
export async function forgetTypedLeads(trx: Transaction<Database>, tenantId: string, mentions: Mentions): Promise<void> {
  const rows = await trx
    .selectFrom('person_logs')
    .select(['id', 'payload'])
    .where('tenant_id', '=', tenantId)
    .where('source', '=', 'pages')
    .where('type', '=', 'form-submitted')
    .where(mentions.mayMention('payload'))
    .execute();
  for (const row of rows) {
    const payload: unknown = JSON.parse(row.payload);
    if (typeof payload !== 'object' || payload === null) continue;
    const fields = payload as Record<string, unknown>;
    if (!TYPED.some((k) => typeof fields[k] === 'string' && mentions.test(fields[k]))) continue;
    for (const k of TYPED) if (k in fields) fields[k] = '';
    await trx
      .updateTable('person_logs')
      .set({ payload: JSON.stringify(fields) })
      .where('id', '=', row.id)
      .execute();
  }
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

/** The payload is replaced whole; a deleted entry is kept as it was (409). */
export async function updateLog(
  trx: Transaction<Database>,
  owner: LogOwner,
  current: LogsTable,
  payload: Record<string, unknown>,
): Promise<LogsTable> {
  assertLive(current);
  const row = await trx
    .updateTable(LOGS[owner])
    .set({ payload: JSON.stringify(payload), updated_at: after(current.updated_at ?? current.created_at) })
    .where('id', '=', current.id)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
  if (!row) throw conflict('The log entry was deleted meanwhile; it can no longer be changed');
  return row;
}

/** A deleted entry cannot change, not even by a PATCH that changes nothing (409). */
export function assertLive(entry: LogsTable): void {
  if (entry.deleted_at !== null) throw conflict('The log entry is deleted; it can no longer be changed');
}

/** Soft: the entry stays readable with `deletedAt` set. Undefined when it was already deleted (no second event). */
export async function deleteLog(trx: Transaction<Database>, owner: LogOwner, current: LogsTable): Promise<LogsTable | undefined> {
  if (current.deleted_at !== null) return undefined;
  return trx
    .updateTable(LOGS[owner])
    .set({ deleted_at: now() })
    .where('id', '=', current.id)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** The owner's entries, newest first, filtered; `createdAt` in [since, until). */
export async function listLogs<Item>(
  db: Kysely<Database>,
  owner: LogOwner,
  tenantId: string,
  ownerId: string,
  query: LogListQuery,
  map: (row: LogsTable) => Item,
) {
  const since = query.since === undefined ? undefined : toInstant(query.since, true);
  const until = query.until === undefined ? undefined : toInstant(query.until, true);
  if (query.since !== undefined && since === undefined) throw invalidField('/since', 'is not an instant of the years 0001-9999');
  if (query.until !== undefined && until === undefined) throw invalidField('/until', 'is not an instant of the years 0001-9999');
  const filters = {
    source: query.source ?? null,
    type: query.type ?? null,
    since: since ?? null,
    until: until ?? null,
    deleted: query.includeDeleted === true,
  };
  const rows = db
    .selectFrom(LOGS[owner])
    .where('tenant_id', '=', tenantId)
    .where('owner_id', '=', ownerId)
    .$if(query.source !== undefined, (q) => q.where('source', '=', query.source ?? ''))
    .$if(query.type !== undefined, (q) => q.where('type', '=', query.type ?? ''))
    .$if(since !== undefined, (q) => q.where('created_at', '>=', since ?? ''))
    .$if(until !== undefined, (q) => q.where('created_at', '<', until ?? ''))
    .$if(query.includeDeleted !== true, (q) => q.where('deleted_at', 'is', null));
  return TIMELINES[owner].read({ query, within: ownerId, filters, rows: rows.selectAll(), count: rows, map });
}

const TIMELINES = {
  person: keysetList({ name: 'person_logs', table: 'person_logs', ...NEWEST_FIRST }),
  account: keysetList({ name: 'account_logs', table: 'account_logs', ...NEWEST_FIRST }),
};

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

/** The newest `each` logs of each owner (deleted ones left out), newest first; owners without logs are absent. */
export async function latestLogsOf(
  db: Kysely<Database>,
  owner: LogOwner,
  ownerIds: readonly string[],
  each: number,
): Promise<Map<string, LogsTable[]>> {
  const byOwner = new Map<string, LogsTable[]>();
  if (ownerIds.length === 0) return byOwner;
  const ranked = db
    .selectFrom(LOGS[owner])
    .selectAll()
    .select(sql<number>`row_number() over (partition by owner_id order by created_at desc, id desc)`.as('rn'))
    .where('owner_id', 'in', ownerIds)
    .where('deleted_at', 'is', null);
  const rows: LogsTable[] = await db
    .selectFrom(ranked.as('r'))
    .selectAll()
    .where('rn', '<=', each)
    .orderBy('owner_id')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
  for (const row of rows) byOwner.set(row.owner_id, [...(byOwner.get(row.owner_id) ?? []), row]);
  return byOwner;
}
