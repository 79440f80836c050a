import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { type OpenVisit, visitReads } from '../visits/index.js';
import { REALTIME_MAX_VISITS, REALTIME_WINDOW_SECONDS, type Realtime, type RealtimeVisit } from './schemas.js';

/**
 * Each open visit with its page's name and its audience's (left: the page itself, with no home
 * audience, is measured under the page's own id), in the order given.
 */
async function named(db: Kysely<Database>, tenantId: string, visits: OpenVisit[]) {
  if (visits.length === 0) return [];
  const [pages, audiences] = await Promise.all([
    db
      .selectFrom('pages')
      .select(['id', 'name'])
      .where('tenant_id', '=', tenantId)
      .where('id', 'in', [...new Set(visits.map((v) => v.page_id))])
      .execute(),
    db
      .selectFrom('audiences')
      .leftJoin('persons', (join) =>
        join.onRef('persons.id', '=', 'audiences.person_id').onRef('persons.tenant_id', '=', 'audiences.tenant_id'),
      )
      .select([
        'audiences.id',
        'audiences.person_id',
        'audiences.effective_name',
        'audiences.rules',
        'audiences.home_page',
        'persons.name as person_name',
      ])
      .where('audiences.tenant_id', '=', tenantId)
      .where('audiences.id', 'in', [...new Set(visits.map((v) => v.audience_id))])
      .execute(),
  ]);
  const pageNames = new Map(pages.map((p) => [p.id, p.name]));
  const byId = new Map(audiences.map((a) => [a.id, a]));
  return visits.flatMap((v) => {
    const page_name = pageNames.get(v.page_id);
    if (page_name === undefined) return [];
    const a = byId.get(v.audience_id);
    return [
      {
        ...v,
        page_name,
        person_id: a?.person_id ?? null,
        audience_name: a?.effective_name ?? null,
        rules: a?.rules ?? null,
        home_page: a?.home_page ?? null,
        person_name: a?.person_name ?? null,
      },
    ];
  });
}

const pathOf = (url: string): string => {
  try {
    return new URL(url).pathname;
  } catch {
    return '';
  }
};

/**
 * The tenant's visits active now: a report in the last five minutes and `session.ended` not yet
 * due (the store reads them by the open visits' index), named by their page and audience.
 */
export async function realtime(db: Kysely<Database>, tenantId: string, idleSeconds: number, at = Date.now()): Promise<Realtime> {
  const now = new Date(at).toISOString();
  const since = new Date(at - REALTIME_WINDOW_SECONDS * 1000).toISOString();
  const idleSince = new Date(at - idleSeconds * 1000).toISOString();
  const open = await visitReads(db).openVisits(tenantId, { now, since, idleSince }, REALTIME_MAX_VISITS);
  const rows = await named(db, tenantId, open.visits);
  const persons = [...new Set(rows.flatMap((r) => (r.person_id === null ? [] : [r.person_id])))];
  const accounts = new Map<string, { id: string; name: string }>();
  if (persons.length > 0) {
    const found = await db
      .selectFrom('persons')
      .innerJoin('accounts', (join) =>
        join.onRef('accounts.domain_lc', '=', 'persons.domain_lc').onRef('accounts.tenant_id', '=', 'persons.tenant_id'),
      )
      .select(['persons.id as person_id', 'accounts.id as account_id', 'accounts.name as account_name'])
      .where('persons.tenant_id', '=', tenantId)
      .where('persons.id', 'in', persons)
      .orderBy('accounts.id', 'desc')
      .execute();
    // Ordered so the lowest account id is set last: the same account as visit.started names.
    for (const f of found) accounts.set(f.person_id, { id: f.account_id, name: f.account_name });
  }
  // Names the tenant already holds: the person the audience was made for (a person's own link) and
  // that person's account. Nothing about an anonymous visitor is looked up or kept.
  const visits: RealtimeVisit[] = rows.map((r) => {
    const account = r.person_id === null ? undefined : accounts.get(r.person_id);
    return {
      audienceSessionId: r.id,
      pageId: r.page_id,
      pageName: r.page_name,
      audienceId: r.audience_id,
      audienceName: r.audience_name ?? r.page_name,
      audienceKind: r.rules !== null ? 'segment' : r.person_id !== null ? 'person' : Number(r.home_page) === 1 ? 'home' : 'other',
      personId: r.person_id,
      personName: r.person_id === null ? null : (r.person_name ?? null),
      accountId: account?.id ?? null,
      accountName: account?.name ?? null,
      path: pathOf(r.page_url),
      channel: r.channel as RealtimeVisit['channel'],
      channelGroup: r.channel_group as RealtimeVisit['channelGroup'],
      country: r.country,
      sessionStartedAt: r.session_started_at,
      lastSeenAt: r.session_ended_at,
    };
  });
  return { since, count: open.count, visits };
}
