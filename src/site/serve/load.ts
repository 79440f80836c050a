import type { Kysely } from 'kysely';
import { accountNameOfDomain } from '../../accounts/index.js';
import { findShownImages } from '../../assets/index.js';
import { findAudience, findVersion } from '../../audiences/index.js';
import type { AudiencesTable, Database, PagesTable } from '../../db/types.js';
import { findPage, toPage, type Content } from '../../pages/index.js';
import { getPerson } from '../../persons/index.js';
import { sectionImageIds, type ShownRows } from '../../render/index.js';
import { findShownImage, findSiteSettings } from '../../site-settings/index.js';

/** Which rows a document shows: what the choose step settled (choose.ts, `Variant`). */
export interface Shows {
  tenantId: string;
  pageId: string;
  /** The audience the document is served for; null: the page itself. */
  audienceId: string | null;
  /** The audience whose texts and content are shown (`audienceId`, or under control another or none). */
  shows: string | null;
  /** An experiment's arm: this version of the shown audience instead of its published one. */
  versionId: string | null;
}

/** Rows a caller has read already (a preview), and content shown instead of the stored one. */
export interface Given {
  page: PagesTable;
  audience: AudiencesTable | undefined;
  /** Unsaved content (a preview's draft), shown instead of the version's or the page's. */
  draft?: Content;
}

/**
 * The load step: every row a served document shows, read here and nowhere else (the rendering
 * reads nothing): the page, the audience it is served for and the one whose texts it shows, that
 * audience's version (an arm's, else its published one), its person and their account, the
 * tenant's brand, and the images the content names. Undefined when the page is gone since the
 * variant was chosen.
 */
export async function load(db: Kysely<Database>, variant: Shows, given?: Given): Promise<ShownRows | undefined> {
  const { tenantId, pageId, audienceId, shows } = variant;
  const page = given ? given.page : await findPage(db, tenantId, pageId);
  if (!page) return undefined;
  const audience = given ? given.audience : audienceId !== null ? await findAudience(db, tenantId, pageId, audienceId) : undefined;
  const shown = shows === null ? undefined : shows === audienceId ? audience : await findAudience(db, tenantId, pageId, shows);
  const [version, person] = await Promise.all([
    shown ? findVersion(db, shown, variant.versionId ?? shown.published_version_id) : undefined,
    shown?.person_id ? getPerson(db, tenantId, shown.person_id) : undefined,
  ]);
  const accountName = person?.domain ? await accountNameOfDomain(db, tenantId, person.domain) : undefined;
  const settings = await findSiteSettings(db, tenantId);
  const image = (assetId: string | null | undefined) => (assetId ? findShownImage(db, tenantId, assetId) : undefined);
  const [logo, favicon] = await Promise.all([image(settings?.logo_asset_id), image(settings?.favicon_asset_id)]);
  const shownPage = toPage({ ...page, audiences_count: 0 });
  // The draft, else the audience's published version's content, else the page's.
  const content = given?.draft ?? (version?.content ? (JSON.parse(version.content) as Content) : shownPage.content);
  const images = await findShownImages(db, tenantId, sectionImageIds(content));
  const personName = person?.name;
  return { row: page, page: shownPage, audience, shown, content, personName, accountName, settings, logo, favicon, images };
}
