import type { Kysely } from 'kysely';
import type { AudiencesTable, Database, PagesTable } from '../../db/types.js';
import type { SiteHost } from '../hosts.js';
import { staysOnHost } from '../location.js';
import { resolve } from '../serve/resolve.js';
import type { VisitClaims } from '../../visits/index.js';

/**
 * Whether the URL a form was posted from still shows the token's page to its audience: the path
 * resolves (serve/resolve.ts) to the same page, and the audience it asks for is the token's: the
 * one its link names, the person's its route key names, else the page's home audience, a segment
 * of the page (matched per visit), or the page itself. Only then does the thank-you go back to that
 * URL, and the session record it. Nothing is rendered for it.
 */
export async function stillShown(
  db: Kysely<Database>,
  host: SiteHost,
  path: string,
  claims: VisitClaims,
  target: { page: PagesTable; audience: AudiencesTable | undefined },
): Promise<boolean> {
  const { page, audience } = target;
  if (!staysOnHost(path) || page.status !== 'published' || (audience?.archived_at ?? null) !== null) return false;
  const resolved = await resolve(db, host, path);
  if (resolved?.kind !== 'page' || resolved.pageId !== claims.pageId) return false;
  const asked = resolved.audience;
  if (asked.by === 'id') return asked.audienceId === claims.audienceId;
  const everyone = audience === undefined || audience.home_page === 1;
  if (asked.by === 'routeKey') return audience?.person_route_key === asked.key || everyone;
  return everyone || audience.person_id === null;
}
