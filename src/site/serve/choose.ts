import { siteSequenceAt } from '../../db/changes.js';
import { assignment, stickyArm } from '../../experiments/index.js';
import type { SiteContext } from '../context.js';
import type { SiteHost } from '../hosts.js';
import type { Resolution } from './resolve.js';
import { matchSegment, type PageSegments, pageSegments, readPageSegments } from './segments.js';
import { readStamp } from './stamp.js';
import { type Chosen, variantOf } from './variant.js';
import type { VisitFacts } from './visit.js';

/** A path that resolved to a page for everyone (link to the page, or the home page). */
export type PageResolution = Extract<Resolution, { kind: 'page' }>;

/** How choose asks the served-path memo (documents.ts): `T` is a remembered answer still good. */
export interface ChooseMemo<T> {
  remember(value: { kind: 'segmented'; resolution: PageResolution; segments: PageSegments }): void;
  /** The visit matched this segment (or none): its own remembered answer, when still cached. */
  atSegment(segment: string | undefined): Promise<T | undefined>;
}

export interface ChooseOptions {
  origin: string;
  path: string;
  submitted: boolean;
  visitorKey?: () => Promise<string>;
  facts?: VisitFacts;
  preferredSegment?: string;
  /** The tenant's change sequence, when the path's first statement read it (PostgreSQL). */
  sequence?: number;
}

/**
 * The choose step: the audience (the path's, else the segment the visit matches), then the
 * experiment arm or control, and what each shows, from the stamp of the page and audience (one
 * read). `none`: the page is not served; `gone`: the path named an audience erased with its person.
 */
export async function choose<T>(
  context: SiteContext,
  host: SiteHost,
  target: PageResolution | { kind: 'segmented'; resolution: PageResolution; segments: PageSegments },
  memo: ChooseMemo<T>,
  options: ChooseOptions,
): Promise<{ kind: 'chosen'; chosen: Chosen } | { kind: 'found'; found: T } | { kind: 'none' } | { kind: 'gone' }> {
  const { facts } = options;
  const resolution = target.kind === 'segmented' ? target.resolution : target;
  let segments = target.kind === 'segmented' ? target.segments : undefined;
  let company = segments?.tenantReadsCompany ?? false;
  // Only a path that shows the page to everyone (no person's or audience's link) matches segments.
  if (!segments && resolution.audience.by === 'home' && facts) {
    const dataVersion = options.sequence === undefined ? context.dataVersion?.() : undefined;
    const sequence =
      options.sequence ?? (dataVersion !== undefined ? await siteSequenceAt(context.db, host.tenantId, dataVersion) : undefined);
    const read =
      sequence !== undefined
        ? await pageSegments(context.db, host.tenantId, resolution.pageId, sequence)
        : await readPageSegments(context.db, host.tenantId, resolution.pageId);
    company = read.tenantReadsCompany;
    if (read.segments.length > 0) {
      segments = read;
      memo.remember({ kind: 'segmented', resolution, segments });
    }
  }
  let audience = resolution.audience;
  if (segments && facts) {
    const matched = await matchSegment(segments, facts, options.preferredSegment);
    if (matched !== undefined) audience = { by: 'id', audienceId: matched };
    const found = await memo.atSegment(matched);
    if (found) return { kind: 'found', found };
  }
  const stamp = await readStamp(context.db, host.tenantId, resolution.pageId, audience);
  if (!stamp) return { kind: 'none' };
  if (stamp.gone) return { kind: 'gone' };
  const assigned = await assignment(stamp, options.visitorKey, (experimentId, unit, candidate) =>
    stickyArm(context.db, experimentId, unit, candidate),
  );
  const chosen = variantOf(host, resolution, stamp, assigned, options);
  return { kind: 'chosen', chosen: { ...chosen, segmented: segments !== undefined, company } };
}
