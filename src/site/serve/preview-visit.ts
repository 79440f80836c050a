import type { Kysely } from 'kysely';
import type { Database } from '../../db/types.js';
import type { PreviewVisit } from '../../pages/index.js';
import { matchSegment, readPageSegments } from './choose.js';
import { describedVisit } from './visit.js';

/**
 * The segment of the page a described visit would be served (the first it matches, by the same
 * reading and matching a served page uses: segments.ts), and its token values. Undefined
 * `audienceId`: no segment matches, so the visit gets what everyone gets (the home audience, else
 * the page). Handed to the preview by app.ts: the rendering sits below the visitor plane.
 */
export async function chooseForVisit(db: Kysely<Database>, tenantId: string, pageId: string, visit: PreviewVisit) {
  const facts = describedVisit(visit);
  const segments = await readPageSegments(db, tenantId, pageId);
  const audienceId = segments.segments.length > 0 ? await matchSegment(segments, facts) : undefined;
  return { audienceId, token: facts.token };
}
