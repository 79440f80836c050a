import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { REALTIME_MAX_VISITS, REALTIME_WINDOW_SECONDS, type Realtime, type RealtimeVisit } from './schemas.js';

const pathOf = (url: string): string => {
  try {
    return new URL(url).pathname;
  } catch {
    return '';
  }
};

/**
 * The tenant's visits active now: a report in the last five minutes and `session.ended` not yet
 * due. Read through the open visits' index (`end_due_at`, set only while a visit is open, and
 * never before its last report), so the cost follows the visits open now, not the sessions kept.
 * With `end_due_follows` the end falls due the idle time after the last report, and `end_due_at`
 * is only a lower bound of it (migration 0029).
 */
export async function realtime(db: Kysely<Database>, tenantId: string, idleSeconds: number, at = Date.now()): Promise<Realtime> {
  const now = new Date(at).toISOString();
  const since = new Date(at - REALTIME_WINDOW_SECONDS * 1000).toISOString();
  const idleSince = new Date(at - idleSeconds * 1000).toISOString();
  const open = db
    .selectFrom('audience_sessions')
    .where('audience_sessions.end_due_at', 'is not', null)
    .where((eb) =>
      eb.or([
        eb('audience_sessions.end_due_at', '>', now),
        eb.and([eb('audience_sessions.end_due_follows', '=', 1), eb('audience_sessions.session_ended_at', '>', idleSince)]),
      ]),
    )
    .where('audience_sessions.tenant_id', '=', tenantId)
    .where('audience_sessions.session_ended_at', '>=', since);
  const [counted, rows] = await Promise.all([
    open.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    open
      // Left: the page itself (no home audience) is measured under the page's own id, no audience's.
      .leftJoin('audiences', 'audiences.id', 'audience_sessions.audience_id')
      .innerJoin('pages', 'pages.id', 'audience_sessions.page_id')
      .leftJoin('persons', (join) =>
        join.onRef('persons.id', '=', 'audiences.person_id').onRef('persons.tenant_id', '=', 'audience_sessions.tenant_id'),
      )
      .select([
        'audience_sessions.id',
        'audience_sessions.page_id',
        'audience_sessions.audience_id',
        'audience_sessions.page_url',
        'audience_sessions.channel',
        'audience_sessions.channel_group',
        'audience_sessions.country',
        'audience_sessions.session_started_at',
        'audience_sessions.session_ended_at',
        'audiences.person_id',
        'audiences.effective_name as audience_name',
        'audiences.rules',
        'audiences.home_page',
        'persons.name as person_name',
        'pages.name as page_name',
      ])
      .orderBy('audience_sessions.session_ended_at', 'desc')
      .orderBy('audience_sessions.id')
      .limit(REALTIME_MAX_VISITS)
      .execute(),
  ]);
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
  return { since, count: Number(counted.n), visits };
}
