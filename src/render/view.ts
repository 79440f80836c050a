import type { AudiencesTable, PagesTable, SiteSettingsTable } from '../db/types.js';
import { fullMetadata, parseMetadata, type Content, type Page } from '../pages/index.js';
import type { ShownImage } from '../assets/index.js';
import type { Brand, Picture } from './brand.js';
import type { View } from './document.js';
import type { TokenValues } from './content.js';

/** An image file of the tenant as its site settings show it (logo, favicon). */
export interface BrandImage {
  fileId: string;
  contentType: string;
  width: number;
  height: number;
  name: string;
}

/**
 * Every stored value one document shows, read beforehand in one place (site/serve/load.ts): the
 * rendering itself reads nothing, so what it shows is exactly what was loaded.
 */
export interface ShownRows {
  /** The page's row (its `updated_at` says whether a rendering may be cached), and the page as shown. */
  row: PagesTable;
  page: Page;
  /** The audience the document is served for: its visit, leads and indexing. */
  audience: AudiencesTable | undefined;
  /** The audience whose texts are shown: `audience`, or under a holdout's control another one or none. */
  shown: AudiencesTable | undefined;
  content: Content;
  personName: string | undefined;
  accountName: string | undefined;
  settings: SiteSettingsTable | undefined;
  logo: BrandImage | undefined;
  favicon: BrandImage | undefined;
  images: ReadonlyMap<string, ShownImage>;
}

/** What a view needs beyond the stored rows: how this document is served. */
export type ViewOptions = Pick<View, 'path' | 'measured' | 'fileSrc' | 'fileUrl' | 'form'> & {
  preview?: boolean;
  /** The visit's own token values, and where the tokens used are collected (render/content.ts). */
  visitTokens?: Pick<TokenValues, 'visit' | 'used'>;
};

/** The page as rendered for an audience of it (or none), from its loaded rows. */
export function viewOf(rows: ShownRows, options: ViewOptions): View {
  const { preview, visitTokens, ...served } = options;
  const { audience, shown } = rows;
  const pageMetadata = parseMetadata(rows.row.metadata);
  const override = shown ? parseMetadata(shown.metadata_override) : null;
  const brand = rows.settings && brandOf(rows, served.fileSrc);
  return {
    ...served,
    page: rows.page,
    images: rows.images,
    // Control keeps a lead form (its visit is recorded, and its leads are control's conversions),
    // with the page's own texts and links, not the audience's.
    ...(audience
      ? {
          audience: {
            name: shown ? shown.effective_name : '',
            formInstructionsOverride: shown ? shown.action_form_instructions_override : null,
            urlOverride: shown ? shown.action_url_override : null,
          },
        }
      : {}),
    metadata: pageMetadata !== null || override !== null ? fullMetadata(pageMetadata, override) : undefined,
    content: rows.content,
    values: { personName: rows.personName, accountName: rows.accountName, audienceName: shown?.effective_name, ...visitTokens },
    noindex: preview === true || (audience?.person_id ?? null) !== null,
    ...(brand ? { brand } : {}),
  };
}

/** The title a document of these rows bears: its metadata's, else the page's. */
export function titleOf(row: PagesTable, shown: AudiencesTable | undefined): string {
  const pageMetadata = parseMetadata(row.metadata);
  const override = shown ? parseMetadata(shown.metadata_override) : null;
  const metadata = pageMetadata !== null || override !== null ? fullMetadata(pageMetadata, override) : undefined;
  return metadata?.title || row.title;
}

/** The tenant's site settings with their images' files. */
function brandOf(rows: ShownRows, fileSrc: (fileId: string) => string): Brand | undefined {
  const { settings } = rows;
  if (!settings) return undefined;
  const picture = (image: BrandImage | undefined): Picture | undefined =>
    image && { src: fileSrc(image.fileId), contentType: image.contentType, width: image.width, height: image.height, alt: image.name };
  const logo = picture(rows.logo);
  const favicon = picture(rows.favicon);
  return {
    brandColor: settings.brand_color,
    textColor: settings.text_color,
    backgroundColor: settings.background_color,
    font: settings.font,
    footerText: settings.footer_text,
    privacyUrl: settings.privacy_url,
    ...(logo ? { logo } : {}),
    ...(favicon ? { favicon } : {}),
  };
}
