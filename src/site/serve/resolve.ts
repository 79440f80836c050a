import type { Kysely } from 'kysely';
import { prepared } from '../../db/prepared.js';
import type { Database, PageLinksTable } from '../../db/types.js';
import type { SiteHost } from '../hosts.js';

type Link = Pick<PageLinksTable, 'id' | 'path' | 'target_type' | 'target_audience_id' | 'page_id' | 'updated_at'>;

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

const ofLink = (link: Link): AudienceChoice =>
  link.target_type === 'audience' && link.target_audience_id !== null ? { by: 'id', audienceId: link.target_audience_id } : { by: 'home' };

/**
 * A visitor path against the domain's live links, exact match (links are case-sensitive, as
 * their unique index is): the link itself; one trailing slash more than a link, a 308 to it;
 * `P/<key>` under a `page_routing` link at `P`; `/` without a link, the tenant's home page.
 * Undefined: nothing here (404). Whether the page may be served is the caller's next read.
 */
export async function resolvePath(db: Kysely<Database>, host: SiteHost, path: string): Promise<Resolution | undefined> {
  const link = await findLink(db, host, path);
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
