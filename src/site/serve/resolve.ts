import { sql, type Kysely } from 'kysely';
import { batchedReads } from '../../db/batch.js';
import { prepared } from '../../db/prepared.js';
import type { Database, PageLinksTable } from '../../db/types.js';
import type { SiteHost } from '../hosts.js';

export type Link = Pick<PageLinksTable, 'id' | 'path' | 'target_type' | 'target_audience_id' | 'page_id' | 'updated_at'>;

/** Which of the page's live audiences a visitor path asks for. */
export type AudienceChoice = { by: 'id'; audienceId: string } | { by: 'home' } | { by: 'routeKey'; key: string };

export type Resolution =
  | { kind: 'redirect'; location: string }
  | {
      kind: 'page';
      /** The link the visitor came through; undefined for `/` served by the tenant's home page. */
      link: Link | undefined;
      pageId: string;
      audience: AudienceChoice;
    };

const LINK_COLUMNS = ['id', 'path', 'target_type', 'target_audience_id', 'page_id', 'updated_at'] as const;

/** The live link of a path on a domain; compiled once, since it runs on every visitor request. */
const linkByPath = prepared((db, p: { domainId: string; path: string }) =>
  db
    .selectFrom('page_links')
    .select(LINK_COLUMNS)
    .where('tenant_domain_id', '=', p.domainId)
    .where('path', '=', p.path)
    .where('deleted_at', 'is', null),
);

async function findLink(db: Kysely<Database>, host: SiteHost, path: string): Promise<Link | undefined> {
  return (await linkByPath(db, { domainId: host.domainId, path }))[0];
}

/** What the first statement of a served path reads (readSequenceAndLink). */
export interface SequenceAndLink {
  /** The tenant's change sequence (db/changes.ts, `site:<tenantId>`) when the link was read: 0 before any change. */
  sequence: number;
  /** Whether the domain is still a verified domain of the tenant (the door's answer may be up to 5 s old). */
  domainLive: boolean;
  /** The live link at exactly this path, if any. */
  link: Link | undefined;
}

interface SequenceRow {
  sequence: number | string | null;
  domain_live: number | boolean | null;
  id: string | null;
  path: string | null;
  target_type: Link['target_type'] | null;
  target_audience_id: string | null;
  page_id: string | null;
  updated_at: string | null;
}

/**
 * The tenant's change sequence, whether the domain is still served, and the link at the path, in
 * one statement: without SQLite's `data_version` (PostgreSQL), the served-document memo is keyed by
 * the sequence, so a path whose tenant changed nothing costs this one statement. The sequence is
 * read in the same snapshot as the link, and every later read sees that state or a newer one: an
 * answer remembered under it is never older than it.
 */
const sequenceAndLink = prepared((db, p: { tenantId: string; domainId: string; path: string }) => ({
  compile: () =>
    sql<SequenceRow>`
      select
        (select c.value from change_counters c where c.scope = 'site:' || cast(${p.tenantId} as text)) as sequence,
        (select 1 from tenant_domains d where d.id = ${p.domainId} and d.tenant_id = ${p.tenantId} and d.status = 'verified') as domain_live,
        l.id, l.path, l.target_type, l.target_audience_id, l.page_id, l.updated_at
      from (select 1 as one) as here
      left join page_links l on l.tenant_domain_id = ${p.domainId} and l.path = ${p.path} and l.deleted_at is null`.compile(db),
}));

/** The same read for the paths of many requests at once (db/batch.ts), each row naming its key. */
const sequencesAndLinks = prepared((db, p: { tenantIds: string[]; domainIds: string[]; paths: string[] }) => ({
  compile: () =>
    sql<SequenceRow & ServedKey>`
      select
        k.tenant_id as key_tenant_id, k.domain_id as key_domain_id, k.path as key_path,
        (select c.value from change_counters c where c.scope = 'site:' || k.tenant_id) as sequence,
        (select 1 from tenant_domains d where d.id = k.domain_id and d.tenant_id = k.tenant_id and d.status = 'verified') as domain_live,
        l.id, l.path, l.target_type, l.target_audience_id, l.page_id, l.updated_at
      from unnest(cast(${p.tenantIds} as text[]), cast(${p.domainIds} as text[]), cast(${p.paths} as text[])) as k(tenant_id, domain_id, path)
      left join page_links l on l.tenant_domain_id = k.domain_id and l.path = k.path and l.deleted_at is null`.compile(db),
}));

interface ServedKey {
  key_tenant_id: string;
  key_domain_id: string;
  key_path: string;
}

const servedKey = (tenantId: string, domainId: string, path: string) => JSON.stringify([tenantId, domainId, path]);

const readServed = batchedReads({
  id: (key: { tenantId: string; domainId: string; path: string }) => servedKey(key.tenantId, key.domainId, key.path),
  rowId: (row: SequenceRow & Partial<ServedKey>) => servedKey(row.key_tenant_id ?? '', row.key_domain_id ?? '', row.key_path ?? ''),
  one: async (db, key): Promise<SequenceRow | undefined> => (await sequenceAndLink(db, key))[0],
  many: (db, keys) =>
    sequencesAndLinks(db, {
      tenantIds: keys.map((k) => k.tenantId),
      domainIds: keys.map((k) => k.domainId),
      paths: keys.map((k) => k.path),
    }),
});

export async function readSequenceAndLink(db: Kysely<Database>, host: SiteHost, path: string): Promise<SequenceAndLink> {
  const row = await readServed(db, { tenantId: host.tenantId, domainId: host.domainId, path });
  const link: Link | undefined =
    row?.id && row.path !== null && row.target_type !== null && row.page_id !== null && row.updated_at !== null
      ? {
          id: row.id,
          path: row.path,
          target_type: row.target_type,
          target_audience_id: row.target_audience_id,
          page_id: row.page_id,
          updated_at: row.updated_at,
        }
      : undefined;
  return { sequence: Number(row?.sequence ?? 0), domainLive: row?.domain_live != null, link };
}

const ofLink = (link: Link): AudienceChoice =>
  link.target_type === 'audience' && link.target_audience_id !== null ? { by: 'id', audienceId: link.target_audience_id } : { by: 'home' };

/**
 * A visitor path against the domain's live links, exact match (links are case-sensitive, as
 * their unique index is): the link itself; one trailing slash more than a link, a 308 to it;
 * `P/<key>` under a `page_routing` link at `P`; `/` without a link, the tenant's home page.
 * Undefined: nothing here (404). Whether the page may be served is the caller's next read.
 */
export async function resolvePath(
  db: Kysely<Database>,
  host: SiteHost,
  path: string,
  /** The link at exactly `path`, when the caller has read it already (null: read, and there is none). */
  known?: Link | null,
): Promise<Resolution | undefined> {
  const link = known === undefined ? await findLink(db, host, path) : (known ?? undefined);
  if (link) return { kind: 'page', link, pageId: link.page_id, audience: ofLink(link) };
  if (path.length > 1 && path.endsWith('/') && !path.endsWith('//')) {
    const bare = path.slice(0, -1);
    if (await findLink(db, host, bare)) return { kind: 'redirect', location: bare };
  }
  const cut = path.lastIndexOf('/');
  if (cut > 0 && cut < path.length - 1) {
    const parent = await findLink(db, host, path.slice(0, cut));
    if (parent?.target_type === 'page_routing') {
      return { kind: 'page', link: parent, pageId: parent.page_id, audience: { by: 'routeKey', key: path.slice(cut + 1) } };
    }
  }
  if (path === '/') {
    const home = await homePage(db, host.tenantId);
    if (home) return { kind: 'page', link: undefined, pageId: home.id, audience: { by: 'home' } };
  }
  return undefined;
}

/** The tenant's published page flagged `home_page` (the newest, should several be). */
function homePage(db: Kysely<Database>, tenantId: string) {
  return db
    .selectFrom('pages')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('deleted_at', 'is', null)
    .where('status', '=', 'published')
    .where('flags', 'like', '%"home_page"%')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}
