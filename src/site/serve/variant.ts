import type { Assignment } from '../../experiments/index.js';
import type { SiteHost } from '../hosts.js';
import type { TokenFields } from '../token.js';
import type { Shows } from './load.js';
import type { Link } from './resolve.js';
import type { Stamp } from './stamp.js';

/**
 * Which document one request gets, as one value: where it is served, the audience (a segment's
 * included), what it shows, and the experiment arm or control. Every field is part of the cache
 * key (`variantKey`), so a field added here (a locale, a schedule) can never be left out of it.
 */
export interface Variant extends Shows {
  /** The domain's public origin: crawlers need absolute image URLs. */
  origin: string;
  path: string;
  /** The thank-you after a lead form: the same visit, measured already. */
  submitted: boolean;
  /** The link the visitor came through and its version; '' for `/` served by the home page. */
  linkId: string;
  linkUpdatedAt: string;
  /** `<experimentId>:<arm>`, `control` while a holdout won by control holds, or '' outside experiments. */
  arm: string;
}

/** The document cache key: the variant and the versions of every row it was read from, whole. */
export const variantKey = (variant: Variant, stamp: Stamp): string => JSON.stringify([variant, stamp]);

/** What the choose step settles besides the variant: the token of its visits, and how it may be kept. */
export interface Chosen {
  variant: Variant;
  stamp: Stamp;
  key: string;
  visit: TokenFields;
  /** A visitor's daily key varies by visitor: its arm is chosen per request, never remembered per path. */
  rememberable: boolean;
  /** Whether another visitor of the same URL may get another audience (a segment). */
  segmented: boolean;
  /** Whether the tenant's segments read a company: only then may `{{company.*}}` ask the provider. */
  company: boolean;
}

/** What a variant's `arm` says of an assignment: one document per label, whoever the visitor. */
export const armLabel = (assigned: Assignment | 'control' | undefined): string =>
  typeof assigned === 'object' ? `${assigned.experimentId}:${assigned.arm}` : assigned === 'control' ? 'control' : '';

/** The variant an assignment makes of the stamp, and the token of its visits. */
export function variantOf(
  host: SiteHost,
  resolution: { link: Link | undefined },
  stamp: Stamp,
  assigned: Assignment | 'control' | undefined,
  options: { origin: string; path: string; submitted: boolean },
): Omit<Chosen, 'segmented' | 'company'> {
  const arm = typeof assigned === 'object' ? assigned : undefined;
  const control = assigned === 'control' || arm?.asControl === true;
  const variant: Variant = {
    tenantId: host.tenantId,
    pageId: stamp.pageId,
    audienceId: stamp.audienceId,
    // A person's control is the page as a visitor with no audience sees it; a segment's, the page
    // as everyone sees it: the home audience's version, else the page.
    shows: !control ? stamp.audienceId : stamp.personId === null ? stamp.homeAudienceId : null,
    versionId: arm?.versionId ?? null,
    origin: options.origin,
    path: options.path,
    submitted: options.submitted,
    linkId: resolution.link?.id ?? '',
    linkUpdatedAt: resolution.link?.updated_at ?? '',
    arm: armLabel(assigned),
  };
  const shownVersion =
    variant.versionId ?? (variant.shows === null ? null : variant.shows === stamp.audienceId ? stamp.versionId : stamp.homeVersionId);
  const visit: TokenFields = {
    tenantId: host.tenantId,
    pageId: stamp.pageId,
    // The page itself (no home audience) is measured and takes leads under its own id (docs/decisions.md).
    audienceId: stamp.audienceId ?? stamp.pageId,
    linkId: variant.linkId,
    path: options.path,
    ...(arm ? { experimentId: arm.experimentId, arm: arm.arm, unit: arm.unit } : {}),
    // The version shown: an arm's, else the shown audience's published one (the maps are kept per version).
    ...(shownVersion ? { versionId: shownVersion } : {}),
  };
  const rememberable = !arm || arm.unit.startsWith('person:');
  return { variant, stamp, key: variantKey(variant, stamp), visit, rememberable };
}
