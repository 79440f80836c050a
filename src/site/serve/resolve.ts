import type { Kysely } from 'kysely';
import type { Database } from '../../db/types.js';
import { type Link, liveLinkAt } from '../../page-links/index.js';
import type { SiteHost } from '../hosts.js';

export type { Link } from '../../page-links/index.js';

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

async function findLink(db: Kysely<Database>, host: SiteHost, path: string): Promise<Link | undefined> {
  return (await liveLinkAt(db, { domainId: host.domainId, path }))[0];
}

/** The tenant's published page flagged `home_page` (the newest, should several be). */
function homePageOf(db: Kysely<Database>, tenantId: string) {
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

const ofLink = (link: Link): AudienceChoice =>
  link.target_type === 'audience' && link.target_audience_id !== null ? { by: 'id', audienceId: link.target_audience_id } : { by: 'home' };

/**
 * A visitor path against the domain's live links, exact match (links are case-sensitive, as
 * their unique index is): the link itself; one trailing slash more than a link, a 308 to it;
 * `P/<key>` under a `page_routing` link at `P`; `/` without a link, the tenant's home page.
 * Undefined: nothing here (404). Whether the page may be served is the caller's next read.
 */
export async function resolve(
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
    const home = await homePageOf(db, host.tenantId);
    if (home) return { kind: 'page', link: undefined, pageId: home.id, audience: { by: 'home' } };
  }
  return undefined;
}
