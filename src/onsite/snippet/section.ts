import type { Kysely } from 'kysely';
import { findShownImages, type ShownImage } from '../../assets/index.js';
import type { Database } from '../../db/types.js';
import { findFallbackDomain } from '../../domains/index.js';
import type { OriginOf } from '../../http/public-origin.js';
import type { Section } from '../../pages/index.js';
import {
  type Brand,
  brandCss,
  type TokenValues,
  isSelfHosted,
  fileSrc,
  renderSections,
  type SectionContext,
  STYLE,
} from '../../render/index.js';
import { findSiteSettings } from '../../site-settings/index.js';

/** The images inserted sections show, by asset id, and where their files are served. */
export interface SectionImages {
  images: ReadonlyMap<string, ShownImage>;
  /** The absolute URL of a file (the tenant's fallback domain at its public origin), as a served page's. */
  fileSrc: SectionContext['fileSrc'];
}

export const NO_IMAGES: SectionImages = { images: new Map(), fileSrc: () => '' };

/** The image asset ids a section shows: its own and its items'. */
export const sectionAssetIds = (section: Section): string[] => [
  ...(section.imageAssetId === undefined ? [] : [section.imageAssetId]),
  ...(section.items ?? []).flatMap((item) => (item.imageAssetId === undefined ? [] : [item.imageAssetId])),
];

/**
 * The images of the sections about to be inserted, in one query, with their files' absolute URLs on
 * the tenant's fallback domain (every tenant has one and it is never removed: where a page preview's
 * images and a metadata image's URL point). The customer's page is on another origin,
 * so a path alone would point at the customer's own server. `origin` makes the public origin as
 * served pages' absolute URLs are made (http/public-origin.ts).
 */
export async function sectionImages(db: Kysely<Database>, tenantId: string, sections: Section[], origin: OriginOf): Promise<SectionImages> {
  const ids = sections.flatMap(sectionAssetIds);
  if (ids.length === 0) return NO_IMAGES;
  const [images, domain] = await Promise.all([findShownImages(db, tenantId, ids), findFallbackDomain(db, tenantId)]);
  if (!domain || images.size === 0) return NO_IMAGES;
  const files = origin(domain.hostname);
  return { images, fileSrc: (fileId, variant) => `${files}${fileSrc(fileId, variant)}` };
}

/**
 * A `section` change as the script inserts it: the service's own rendering of one section of the
 * page content schema (src/render/sections.ts: every stored text escaped, tokens filled as text,
 * images with their width and height so the box is known before they load), inside a shadow root.
 * Actions are left out (an experience has no page actions: a cta is refused when written), and an
 * image whose asset is gone falls back to nothing, as on a served page.
 */
export function renderSection(section: Section, values: TokenValues, shown: SectionImages = NO_IMAGES): string {
  const context: SectionContext = {
    values,
    images: shown.images,
    fileSrc: shown.fileSrc,
    headerButton: '',
    headline: '',
    action: () => '',
    button: () => '',
  };
  // As a page's first section: only a hero without a heading differs, taking the page's headline, which is ''.
  return renderSections(context, { headline: '', subheadline: '', sections: [section] });
}

/**
 * The style of the shadow root: the served pages' style and the tenant's brand over it, with
 * `:host` standing for the document's body. A self-hosted brand font is shown by its fallback
 * stack: `@font-face` inside a shadow root is ignored by browsers, and its files are on the
 * tenant's domains.
 */
export async function sectionStyle(db: Kysely<Database>, tenantId: string): Promise<string> {
  const settings = await findSiteSettings(db, tenantId);
  const host = ':host{all:initial;display:block}';
  const base = STYLE.replace(/(^|\n)body\{/, '$1.pam{');
  if (!settings) return `${host}${base}`;
  const brand: Brand = {
    brandColor: settings.brand_color,
    textColor: settings.text_color,
    backgroundColor: settings.background_color,
    font: isSelfHosted(settings.font) ? 'system' : settings.font,
    footerText: null,
    privacyUrl: null,
  };
  return `${host}${base}${brandCss(brand).replace(/(^|\})body\{/, '$1.pam{')}`;
}

/** The rendered section in its wrapper (the `.pam` element stands for the page's body in the style). */
export const sectionHtml = (rendered: string) => `<div class="pam">${rendered}</div>`;
