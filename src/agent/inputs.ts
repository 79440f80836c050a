import type { Kysely } from 'kysely';
import { accountRowsOfDomains } from '../accounts/index.js';
import { audienceRowsByIds, toVersion, parseRules, rulesInWords } from '../audiences/index.js';
import type { AudienceVersionsTable, Database } from '../db/types.js';
import { latestLogsOf, type LogOwner } from '../logs/index.js';
import { pageContent, pageRowsByIds } from '../pages/index.js';
import { personRowsByIds, toPerson } from '../persons/index.js';
import { firstTopicsOf, type Topic } from '../topics/index.js';
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
  const audiences = await audienceRowsByIds(db, unique(versions.map((v) => v.audience_id)));
  const pages = await pageRowsByIds(db, unique(audiences.map((a) => a.page_id)));
  const personIds = unique(audiences.flatMap((a) => (a.person_id === null ? [] : [a.person_id])));
  const persons = await personRowsByIds(db, personIds);
  const domains = unique(persons.flatMap((p) => (p.domain_lc === null ? [] : [p.domain_lc])));
  const accounts = await accountRowsOfDomains(db, unique(persons.map((p) => p.tenant_id)), domains);
  const tenants = unique(versions.map((v) => v.tenant_id));
  const [personLogs, accountLogs, topics] = readsHistory
    ? await Promise.all([
        agentLogs(db, 'person', personIds),
        agentLogs(
          db,
          'account',
          accounts.map((a) => a.id),
        ),
        firstTopicsOf(db, tenants, TOPICS, ENTRIES_EACH),
      ])
    : [new Map<string, AgentLog[]>(), new Map<string, AgentLog[]>(), new Map<string, Topic[]>()];

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

/** The newest logs of each owner, in the agent's shape. */
async function agentLogs(db: Kysely<Database>, owner: LogOwner, ownerIds: string[]): Promise<Map<string, AgentLog[]>> {
  const byOwner = new Map<string, AgentLog[]>();
  for (const [ownerId, rows] of await latestLogsOf(db, owner, ownerIds, LOGS_EACH)) {
    byOwner.set(
      ownerId,
      rows.map((row) => ({
        source: row.source,
        type: row.type,
        payload: JSON.parse(row.payload) as Record<string, unknown>,
        createdAt: row.created_at,
      })),
    );
  }
  return byOwner;
}

/** A segment's rules in words, for the prompt and the template (issue 39); nothing for other audiences. */
function segmentWords(rules: string | null): { segment?: string } {
  const parsed = parseRules(rules);
  return parsed ? { segment: rulesInWords(parsed) } : {};
}
