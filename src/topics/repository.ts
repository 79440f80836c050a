import { sql, type Kysely, type Transaction } from 'kysely';
import { lockExclusive } from '../db/locks.js';
import type { Database, TopicEntriesTable, TopicsTable } from '../db/types.js';
import { keysetList } from '../http/pagination.js';
import { MAX_SAFE_INTEGER } from '../http/schemas.js';
import { newId } from '../ids.js';
import { emit } from '../events/index.js';
import { after, now } from '../time.js';
import { conflict, invalidField } from '../http/errors.js';
import { settle } from '../http/round-trip.js';
import type { Topic, TopicCreate, TopicEntry, TopicEntryCreate, TopicListQuery } from './schemas.js';
import { TopicEntryUpdate, TopicUpdate } from './schemas.js';

/** Topics and entries are listed by `sortOrder`, ties broken by id. */
const BY_POSITION = {
  key: [
    { column: 'sort_order', kind: 'integer' },
    { column: 'id', kind: 'id' },
  ],
  direction: 'asc',
} as const;
const topicsList = keysetList({ name: 'topics', table: 'topics', ...BY_POSITION });
const entriesList = keysetList({ name: 'topic_entries', table: 'topic_entries', ...BY_POSITION });

/** One more than the highest, 0 for the first; at the top of the range, the top again (ties go by id). */
const nextPosition = (highest: unknown) => (highest === null ? 0 : Math.min(Number(highest) + 1, MAX_SAFE_INTEGER));

export const toEntry = (row: TopicEntriesTable): TopicEntry => ({
  topicEntryId: row.id,
  topicId: row.topic_id,
  sortOrder: Number(row.sort_order),
  content: { type: row.content_type, content: row.content },
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export const toTopic = (row: TopicsTable, entries: TopicEntriesTable[]): Topic => ({
  topicId: row.id,
  title: row.title,
  purpose: row.purpose,
  sortOrder: Number(row.sort_order),
  isDefault: row.is_default === 1,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  entries: entries.map(toEntry),
});

export function findTopic(db: Kysely<Database>, tenantId: string, topicId: string) {
  return db.selectFrom('topics').selectAll().where('id', '=', topicId).where('tenant_id', '=', tenantId).executeTakeFirst();
}

/** The first topic of a tenant is its default; creations are serialized per tenant so both rules hold. */
export async function createTopic(trx: Transaction<Database>, tenantId: string, input: TopicCreate): Promise<Topic> {
  await lockExclusive(trx, `topics:${tenantId}`);
  const { highest, n } = await trx
    .selectFrom('topics')
    .select((eb) => [eb.fn.max('sort_order').as('highest'), eb.fn.countAll().as('n')])
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow();
  const at = now();
  const row: TopicsTable = {
    id: newId('topic'),
    tenant_id: tenantId,
    title: input.title,
    purpose: null,
    sort_order: input.sortOrder ?? nextPosition(highest),
    is_default: Number(n) === 0 ? 1 : 0,
    created_at: at,
    updated_at: at,
  };
  await trx.insertInto('topics').values(row).execute();
  const topic = toTopic(row, []);
  await emit(trx, tenantId, 'topic.created', topic);
  return topic;
}

/** A page of topics with all their entries, read in one query for the whole page. */
export async function listTopics(db: Kysely<Database>, tenantId: string, query: TopicListQuery) {
  const ofTenant = db.selectFrom('topics').where('tenant_id', '=', tenantId);
  const result = await topicsList.read({ query, rows: ofTenant.selectAll(), count: ofTenant, map: (r) => r });
  const ids = result.items.map((t) => t.id);
  const entries =
    ids.length === 0
      ? []
      : await db.selectFrom('topic_entries').selectAll().where('topic_id', 'in', ids).orderBy('sort_order').orderBy('id').execute();
  const byTopic = new Map<string, TopicEntriesTable[]>();
  for (const e of entries) {
    const list = byTopic.get(e.topic_id);
    if (list) list.push(e);
    else byTopic.set(e.topic_id, [e]);
  }
  return { ...result, items: result.items.map((t) => toTopic(t, byTopic.get(t.id) ?? [])) };
}

export async function createEntry(trx: Transaction<Database>, topic: TopicsTable, input: TopicEntryCreate): Promise<TopicEntry> {
  await lockExclusive(trx, `topic:${topic.id}`);
  const { highest } = await trx
    .selectFrom('topic_entries')
    .select((eb) => eb.fn.max('sort_order').as('highest'))
    .where('topic_id', '=', topic.id)
    .executeTakeFirstOrThrow();
  const at = now();
  const row: TopicEntriesTable = {
    id: newId('entry'),
    tenant_id: topic.tenant_id,
    topic_id: topic.id,
    sort_order: input.sortOrder ?? nextPosition(highest),
    content_type: input.content.type,
    content: input.content.content,
    created_at: at,
    updated_at: at,
  };
  await trx.insertInto('topic_entries').values(row).execute();
  await touchTopic(trx, topic);
  const entry = toEntry(row);
  await emit(trx, topic.tenant_id, 'topic_entry.created', entry);
  return entry;
}

/** A topic with all its entries, in sortOrder order. */
export async function getTopic(db: Kysely<Database>, row: TopicsTable): Promise<Topic> {
  const entries = await db
    .selectFrom('topic_entries')
    .selectAll()
    .where('topic_id', '=', row.id)
    .orderBy('sort_order')
    .orderBy('id')
    .execute();
  return toTopic(row, entries);
}

/**
 * Only the fields present change. `isDefault: true` takes the default from the former default
 * topic in the same transaction (the partial unique index holds one per tenant).
 */
export async function updateTopic(trx: Transaction<Database>, current: TopicsTable, body: TopicUpdate): Promise<Topic> {
  const shown = await getTopic(trx, current);
  const patch = settle(TopicUpdate, body, shown);
  // Only the default topic can be told false (it differs): a tenant always has one default.
  if (patch.isDefault === false) {
    throw invalidField('/isDefault', 'cannot be false for the default topic: make another topic the default instead');
  }
  const changes: Partial<TopicsTable> = {};
  if (patch.title !== undefined) changes.title = patch.title;
  if (patch.purpose !== undefined) changes.purpose = patch.purpose;
  if (patch.sortOrder !== undefined) changes.sort_order = patch.sortOrder;
  if (patch.isDefault === true && current.is_default !== 1) {
    await lockExclusive(trx, `topics:${current.tenant_id}`);
    const former = await trx
      .updateTable('topics')
      .set({ is_default: 0, updated_at: now() })
      .where('tenant_id', '=', current.tenant_id)
      .where('is_default', '=', 1)
      .returningAll()
      .execute();
    for (const row of former) await emit(trx, current.tenant_id, 'topic.updated', await getTopic(trx, row));
    changes.is_default = 1;
  }
  if (Object.keys(changes).length === 0) return shown;
  changes.updated_at = after(current.updated_at);
  const row = await trx.updateTable('topics').set(changes).where('id', '=', current.id).returningAll().executeTakeFirstOrThrow();
  const topic = await getTopic(trx, row);
  await emit(trx, current.tenant_id, 'topic.updated', topic);
  return topic;
}

/** The default topic stays (409): a tenant always has one. Its entries go with it. */
export async function deleteTopic(trx: Transaction<Database>, current: TopicsTable): Promise<void> {
  if (current.is_default === 1) {
    throw conflict("The tenant's default topic cannot be deleted; make another topic the default first");
  }
  const topic = await getTopic(trx, current);
  await trx.deleteFrom('topic_entries').where('topic_id', '=', current.id).execute();
  await trx.deleteFrom('topics').where('id', '=', current.id).execute();
  await emit(trx, current.tenant_id, 'topic.deleted', topic);
}

export function findEntry(db: Kysely<Database>, topic: TopicsTable, entryId: string) {
  return db
    .selectFrom('topic_entries')
    .selectAll()
    .where('id', '=', entryId)
    .where('topic_id', '=', topic.id)
    .where('tenant_id', '=', topic.tenant_id)
    .executeTakeFirst();
}

/** An entry's change is its topic's change too: the topic's `updatedAt` moves. */
async function touchTopic(trx: Transaction<Database>, topic: TopicsTable): Promise<void> {
  await trx
    .updateTable('topics')
    .set({ updated_at: after(topic.updated_at) })
    .where('id', '=', topic.id)
    .execute();
}

export async function updateEntry(
  trx: Transaction<Database>,
  topic: TopicsTable,
  current: TopicEntriesTable,
  body: TopicEntryUpdate,
): Promise<TopicEntry> {
  const shown = toEntry(current);
  const patch = settle(TopicEntryUpdate, body, shown);
  const changes: Partial<TopicEntriesTable> = {};
  if (patch.content !== undefined) {
    changes.content_type = patch.content.type;
    changes.content = patch.content.content;
  }
  if (patch.sortOrder !== undefined) changes.sort_order = patch.sortOrder;
  if (Object.keys(changes).length === 0) return shown;
  changes.updated_at = after(current.updated_at);
  const row = await trx.updateTable('topic_entries').set(changes).where('id', '=', current.id).returningAll().executeTakeFirstOrThrow();
  await touchTopic(trx, topic);
  const entry = toEntry(row);
  await emit(trx, topic.tenant_id, 'topic_entry.updated', entry);
  return entry;
}

export async function deleteEntry(trx: Transaction<Database>, topic: TopicsTable, current: TopicEntriesTable): Promise<void> {
  await trx.deleteFrom('topic_entries').where('id', '=', current.id).execute();
  await touchTopic(trx, topic);
  await emit(trx, topic.tenant_id, 'topic_entry.deleted', toEntry(current));
}

export async function listEntries(db: Kysely<Database>, topic: TopicsTable, query: TopicListQuery) {
  const ofTopic = db.selectFrom('topic_entries').where('topic_id', '=', topic.id);
  return entriesList.read({ query, within: topic.id, rows: ofTopic.selectAll(), count: ofTopic, map: toEntry });
}

/** Each tenant's first `topicsEach` topics in sortOrder, each with its first `entriesEach` entries. */
export async function firstTopicsOf(
  db: Kysely<Database>,
  tenantIds: readonly string[],
  topicsEach: number,
  entriesEach: number,
): Promise<Map<string, Topic[]>> {
  const byTenant = new Map<string, Topic[]>();
  if (tenantIds.length === 0) return byTenant;
  const rankedTopics = db
    .selectFrom('topics')
    .selectAll()
    .select(sql<number>`row_number() over (partition by tenant_id order by sort_order, id)`.as('rn'))
    .where('tenant_id', 'in', tenantIds);
  const topics: TopicsTable[] = await db
    .selectFrom(rankedTopics.as('t'))
    .selectAll()
    .where('rn', '<=', topicsEach)
    .orderBy('tenant_id')
    .orderBy('sort_order')
    .orderBy('id')
    .execute();
  const entries: TopicEntriesTable[] =
    topics.length === 0
      ? []
      : await db
          .selectFrom(
            db
              .selectFrom('topic_entries')
              .selectAll()
              .select(sql<number>`row_number() over (partition by topic_id order by sort_order, id)`.as('rn'))
              .where(
                'topic_id',
                'in',
                topics.map((t) => t.id),
              )
              .as('e'),
          )
          .selectAll()
          .where('rn', '<=', entriesEach)
          .orderBy('topic_id')
          .orderBy('sort_order')
          .orderBy('id')
          .execute();
  const entriesOf = new Map<string, TopicEntriesTable[]>();
  for (const entry of entries) entriesOf.set(entry.topic_id, [...(entriesOf.get(entry.topic_id) ?? []), entry]);
  for (const topic of topics) {
    byTenant.set(topic.tenant_id, [...(byTenant.get(topic.tenant_id) ?? []), toTopic(topic, entriesOf.get(topic.id) ?? [])]);
  }
  return byTenant;
}
