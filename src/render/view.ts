import type { Kysely } from 'kysely';
import { findAudience, findVersion } from '../audiences/repository.js';
import type { AudiencesTable, Database, PagesTable } from '../db/types.js';
import { fullMetadata, parseMetadata } from '../pages/metadata.js';
import { findPage, toPage } from '../pages/repository.js';
import type { Content } from '../pages/schemas.js';
import { getPerson } from '../persons/repository.js';
import { findShownImage, findSiteSettings } from '../site-settings/repository.js';
import type { Brand, Picture } from './brand.js';
import { findShownImages } from '../assets/repository.js';
import { sectionImageIds } from './sections.js';
import type { View } from './document.js';
import type { TokenValues } from './content.js';

/** What a view needs beyond the stored data: how this document is served. */
export type ViewOptions = Pick<View, 'path' | 'measured' | 'fileSrc' | 'fileUrl' | 'form'> & {
  preview?: boolean;
  /** Unsaved content shown instead of the audience's version or the page's (a live preview). */
  draft?: Content;
  /** An experiment's arm: this version of the audience instead of its published one. */
  versionId?: string;
  /** A holdout's control: what a visitor with no audience sees (the page's content, each token's fallback). */
  asControl?: boolean;
  /** A segment's control: the audience everyone sees instead (the page's home audience). */
  controlShows?: AudiencesTable;
  /** The visit's own token values, and where the tokens used are collected (render/content.ts). */
  visitTokens?: Pick<TokenValues, 'visit' | 'used'>;
};

/** The page as rendered for an audience of it (or none): every stored value the document shows. */
export async function loadView(
  db: Kysely<Database>,
  page: PagesTable,
  audience: AudiencesTable | undefined,
  options: ViewOptions,
): Promise<View> {
  const { preview, draft, versionId, asControl, controlShows, visitTokens, ...served } = options;
  // Control keeps the audience only for what is not shown: its visit is measured, its link not indexed.
  const shownFor = asControl ? controlShows : audience;
  const [version, person] = await Promise.all([
    shownFor ? findVersion(db, shownFor, versionId ?? shownFor.published_version_id) : undefined,
    shownFor?.person_id ? getPerson(db, page.tenant_id, shownFor.person_id) : undefined,
  ]);
  const account = person?.domain ? await accountOfDomain(db, page.tenant_id, person.domain) : undefined;
  const brand = await loadBrand(db, page.tenant_id, served.fileSrc);
  const pageMetadata = parseMetadata(page.metadata);
  const override = shownFor ? parseMetadata(shownFor.metadata_override) : null;
  const shown = toPage({ ...page, audiences_count: 0 });
  // The draft, else the audience's published version's content, else the page's.
  const content = draft ?? (version?.content ? (JSON.parse(version.content) as Content) : shown.content);
  const images = await findShownImages(db, page.tenant_id, sectionImageIds(content));
  return {
    ...served,
    page: shown,
    images,
    // Control keeps a lead form (its visit is recorded, and its leads are control's conversions),
    // with the page's own texts and links, not the audience's.
    ...(audience
      ? {
          audience: {
            name: shownFor ? shownFor.effective_name : '',
            formInstructionsOverride: shownFor ? shownFor.action_form_instructions_override : null,
            urlOverride: shownFor ? shownFor.action_url_override : null,
          },
        }
      : {}),
    metadata: pageMetadata !== null || override !== null ? fullMetadata(pageMetadata, override) : undefined,
    content,
    values: { personName: person?.name, accountName: account?.name, audienceName: shownFor?.effective_name, ...visitTokens },
    noindex: preview === true || (audience?.person_id ?? null) !== null,
    ...(brand ? { brand } : {}),
  };
}

/** The tenant's site settings with their images' files; undefined for a tenant that never set them. */
async function loadBrand(db: Kysely<Database>, tenantId: string, fileSrc: (fileId: string) => string): Promise<Brand | undefined> {
  const settings = await findSiteSettings(db, tenantId);
  if (!settings) return undefined;
  const picture = async (assetId: string | null): Promise<Picture | undefined> => {
    const image = assetId === null ? undefined : await findShownImage(db, tenantId, assetId);
    return (
      image && { src: fileSrc(image.fileId), contentType: image.contentType, width: image.width, height: image.height, alt: image.name }
    );
  };
  const [logo, favicon] = await Promise.all([picture(settings.logo_asset_id), picture(settings.favicon_asset_id)]);
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

async function accountOfDomain(db: Kysely<Database>, tenantId: string, domain: string) {
  return db
    .selectFrom('accounts')
    .select('name')
    .where('tenant_id', '=', tenantId)
    .where('domain_lc', '=', domain.toLowerCase())
    .executeTakeFirst();
}

/** The rows a view is made of, read by the ids a stamp or a preview names. */
export async function rowsOf(db: Kysely<Database>, tenantId: string, pageId: string, audienceId: string | null) {
  const page = await findPage(db, tenantId, pageId);
  const audience = page && audienceId !== null ? await findAudience(db, tenantId, pageId, audienceId) : undefined;
  return { page, audience };
}
