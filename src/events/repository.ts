import type { Kysely } from 'kysely';
import type { Database, EventsTable } from '../db/types.js';
import { keysetList, NEWEST_FIRST } from '../http/pagination.js';
import type { Event, EventListQuery } from './schemas.js';

const toEvent = (row: Pick<EventsTable, 'id' | 'type' | 'created_at' | 'payload'>): Event => ({
  eventId: row.id,
  type: row.type,
  createdAt: row.created_at,
  payload: JSON.parse(row.payload) as Record<string, unknown>,
});

export async function getEvent(db: Kysely<Database>, tenantId: string, eventId: string): Promise<Event | undefined> {
  const row = await db
    .selectFrom('events')
    .select(['id', 'type', 'created_at', 'payload'])
    .where('id', '=', eventId)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  return row && toEvent(row);
}

const eventsList = keysetList({ name: 'events', table: 'events', ...NEWEST_FIRST });

/** The tenant's events, newest first (kept 30 days). */
export async function listEvents(db: Kysely<Database>, tenantId: string, query: EventListQuery) {
  const filters = { type: query.type };
  const matching = db
    .selectFrom('events')
    .where('tenant_id', '=', tenantId)
    .$call((q) => (query.type === undefined ? q : q.where('type', '=', query.type)));
  const rows = matching.select(['id', 'type', 'created_at', 'payload']);
  return eventsList.read({ query, filters, rows, count: matching, map: toEvent });
}

/** The stored payloads of these events (any tenant: the consumers' batches span tenants). */
export function eventPayloads(db: Kysely<Database>, ids: readonly string[]): Promise<Pick<EventsTable, 'id' | 'payload'>[]> {
  return ids.length === 0 ? Promise.resolve([]) : db.selectFrom('events').select(['id', 'payload']).where('id', 'in', ids).execute();
}

/** The stored payload of one event, if it is still kept. */
export async function eventPayload(db: Kysely<Database>, id: string): Promise<string | undefined> {
  return (await db.selectFrom('events').select('payload').where('id', '=', id).executeTakeFirst())?.payload;
}

/** The ids of the events made before `cutoff`, as a subquery (a consumer's rows of those events go first). */
export function eventIdsBefore(db: Kysely<Database>, cutoff: string) {
  return db.selectFrom('events').select('id').where('created_at', '<', cutoff);
}
