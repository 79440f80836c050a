import { sql, type Kysely } from 'kysely';
import { toVersion } from '../audiences/versions.js';
import { parseRules, rulesInWords } from '../audiences/rules.js';
import type { AudienceVersionsTable, Database, LogsTable, TopicEntriesTable, TopicsTable } from '../db/types.js';
import { pageContent } from '../pages/repository.js';
import { toPerson } from '../persons/repository.js';
import { toTopic } from '../topics/repository.js';
import type { AgentLog, GeneratorInput } from './types.js';

const LOGS_EACH = 20;
const TOPICS = 50;
const ENTRIES_EACH = 50;

/**
 * What each version's generator is given (types.ts), read for a whole claimed batch in a few
 * queries: the audiences, pages, persons and accounts at once, and (only for a generator that
 * reads them) the 20 newest logs of each person and account and the tenants' topics.
 * A version whose audience or page is gone is absent from the map.
 */
export async function gatherInputs(
  db: Kysely<Database>,
  versions: AudienceVersionsTable[],
  readsHistory: boolean,
): Promise<Map<string, GeneratorInput>> {
  const inputs = new Map<string, GeneratorInput>();
  if (versions.length === 0) return inputs;
  const audiences = await db
    .selectFrom('audiences')
    .selectAll()
    .where('id', 'in', unique(versions.map((v) => v.audience_id)))
    .execute();
  const pages = await db
    .selectFrom('pages')
    .selectAll()
    .where('id', 'in', unique(audiences.map((a) => a.page_id)))
    .execute();
  const personIds = unique(audiences.flatMap((a) => (a.person_id === null ? [] : [a.person_id])));
  const persons = personIds.length === 0 ? [] : await db.selectFrom('persons').selectAll().where('id', 'in', personIds).execute();
  const domains = unique(persons.flatMap((p) => (p.domain_lc === null ? [] : [p.domain_lc])));
  const accounts =
    domains.length === 0
      ? []
      : await db
          .selectFrom('accounts')
          .selectAll()
          .where('tenant_id', 'in', unique(persons.map((p) => p.tenant_id)))
          .where('domain_lc', 'in', domains)
          .execute();
  const tenants = unique(versions.map((v) => v.tenant_id));
  const [personLogs, accountLogs, topics] = readsHistory
    ? await Promise.all([
        latestLogs(db, 'person_logs', personIds),
        latestLogs(
          db,
          'account_logs',
          accounts.map((a) => a.id),
        ),
        topicsOf(db, tenants),
      ])
    : [new Map<string, AgentLog[]>(), new Map<string, AgentLog[]>(), new Map<string, ReturnType<typeof toTopic>[]>()];

  const audienceById = new Map(audiences.map((a) => [a.id, a]));
  const pageById = new Map(pages.map((p) => [p.id, p]));
  const personById = new Map(persons.map((p) => [p.id, p]));
  const accountByDomain = new Map(accounts.map((a) => [`${a.tenant_id} ${a.domain_lc}`, a]));
  for (const version of versions) {
    const audience = audienceById.get(version.audience_id);
    const page = audience && pageById.get(audience.page_id);
    if (!audience || !page) continue;
    const person = audience.person_id === null ? undefined : personById.get(audience.person_id);
    const account = person?.domain_lc ? accountByDomain.get(`${person.tenant_id} ${person.domain_lc}`) : undefined;
    inputs.set(version.id, {
      page: {
        pageId: page.id,
        name: page.name,
        title: page.title,
        pageContext: page.page_context,
        pageType: page.page_type,
        content: pageContent(page),
      },
      audience: {
        audienceId: audience.id,
        name: audience.effective_name,
        personRouteKey: audience.person_route_key,
        ...segmentWords(audience.rules),
      },
      version: toVersion(version),
      person: person ? toPerson(person) : null,
      account: account ? { accountId: account.id, name: account.name, domain: account.domain } : null,
      personLogs: (person && personLogs.get(person.id)) || [],
      accountLogs: (account && accountLogs.get(account.id)) || [],
      topics: topics.get(version.tenant_id) ?? [],
    });
  }
  return inputs;
}

const unique = <T>(values: T[]): T[] => [...new Set(values)];

/** The newest logs of each owner (deleted ones left out), newest first. */
async function latestLogs(db: Kysely<Database>, table: 'person_logs' | 'account_logs', ownerIds: string[]) {
  const byOwner = new Map<string, AgentLog[]>();
  if (ownerIds.length === 0) return byOwner;
  const ranked = db
    .selectFrom(table)
    .selectAll()
    .select(sql<number>`row_number() over (partition by owner_id order by created_at desc, id desc)`.as('rn'))
    .where('owner_id', 'in', ownerIds)
    .where('deleted_at', 'is', null);
  const rows: LogsTable[] = await db
    .selectFrom(ranked.as('r'))
    .selectAll()
    .where('rn', '<=', LOGS_EACH)
    .orderBy('owner_id')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
  for (const row of rows) {
    const logs = byOwner.get(row.owner_id) ?? [];
    logs.push({
      source: row.source,
      type: row.type,
      payload: JSON.parse(row.payload) as Record<string, unknown>,
      createdAt: row.created_at,
    });
    byOwner.set(row.owner_id, logs);
  }
  return byOwner;
}

/** Each tenant's first topics in sortOrder, each with its first entries. */
async function topicsOf(db: Kysely<Database>, tenantIds: string[]) {
  const rankedTopics = db
    .selectFrom('topics')
    .selectAll()
    .select(sql<number>`row_number() over (partition by tenant_id order by sort_order, id)`.as('rn'))
    .where('tenant_id', 'in', tenantIds);
  const topics: TopicsTable[] = await db
    .selectFrom(rankedTopics.as('t'))
    .selectAll()
    .where('rn', '<=', TOPICS)
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
          .where('rn', '<=', ENTRIES_EACH)
          .orderBy('topic_id')
          .orderBy('sort_order')
          .orderBy('id')
          .execute();
  const entriesOf = new Map<string, TopicEntriesTable[]>();
  for (const entry of entries) entriesOf.set(entry.topic_id, [...(entriesOf.get(entry.topic_id) ?? []), entry]);
  const byTenant = new Map<string, ReturnType<typeof toTopic>[]>();
  for (const topic of topics) {
    byTenant.set(topic.tenant_id, [...(byTenant.get(topic.tenant_id) ?? []), toTopic(topic, entriesOf.get(topic.id) ?? [])]);
  }
  return byTenant;
}

/** A segment's rules in words, for the prompt and the template (issue 39); nothing for other audiences. */
function segmentWords(rules: string | null): { segment?: string } {
  const parsed = parseRules(rules);
  return parsed ? { segment: rulesInWords(parsed) } : {};
}
