import type { Kysely } from 'kysely';
import { CACHES, countedCache } from '../../db/caches.js';
import type { Database } from '../../db/types.js';

/**
 * Stored texts of other planes that may name files the tenant's domains serve: an experience's
 * changes (onsite/), handed in by app.ts so the visitor plane does not import the area above it.
 */
export type MoreServedTexts = (db: Kysely<Database>, tenantId: string) => Promise<string[]>;

/** How a file id looks inside stored JSON (src/ids.ts): its prefix and 26 base32 characters. */
const FILE_ID = /file_[0-9a-z]{26}/g;
/** How an asset id looks there: a section's image is named by its asset, not its file. */
const ASSET_ID = /asset_[0-9a-z]{26}/g;
/** Asset ids asked per statement: far below either database's limit of bound parameters. */
const ASSETS_PER_READ = 500;

/**
 * The files a tenant's domains may serve without a signed link (issue 36): those a live page
 * shows. A file id written anywhere in a page that is not deleted (its metadata's images, its
 * content, actions, widgets, links), or of an active image asset named there with its variants
 * (a section's image and its srcset: the asset's own file and its children's), in an audience of it that is not archived (its metadata
 * override) or a version of one that is neither archived nor cancelled (its content, the
 * generator's included), in an experience's changes (a section it inserts in the customer's site,
 * issue 48), and the files of the brand's logo and favicon while their assets are active. Every other file of the tenant (a trashed asset's, one nothing uses) needs the API's
 * signed link.
 */
async function referencedFiles(db: Kysely<Database>, tenantId: string, moreTexts: MoreServedTexts): Promise<Set<string>> {
  const [pages, audiences, versions, brand, experiences] = await Promise.all([
    db
      .selectFrom('pages')
      .select(['metadata', 'content', 'actions', 'action_card_widgets', 'footer_links', 'flags', 'scripts'])
      .where('tenant_id', '=', tenantId)
      .where('deleted_at', 'is', null)
      .execute(),
    db
      .selectFrom('audiences')
      .innerJoin('pages', 'pages.id', 'audiences.page_id')
      .select('audiences.metadata_override')
      .where('audiences.tenant_id', '=', tenantId)
      .where('audiences.archived_at', 'is', null)
      .where('audiences.metadata_override', 'is not', null)
      .where('pages.deleted_at', 'is', null)
      .execute(),
    db
      .selectFrom('audience_versions')
      .innerJoin('audiences', 'audiences.id', 'audience_versions.audience_id')
      .innerJoin('pages', 'pages.id', 'audiences.page_id')
      .select('audience_versions.content')
      .where('audiences.tenant_id', '=', tenantId)
      .where('audiences.archived_at', 'is', null)
      .where('pages.deleted_at', 'is', null)
      .where('audience_versions.status', 'not in', ['archived', 'cancelled'])
      .where('audience_versions.content', 'is not', null)
      .execute(),
    db
      .selectFrom('site_settings')
      .innerJoin('assets', (join) =>
        join.on((eb) =>
          eb.or([
            eb('assets.id', '=', eb.ref('site_settings.logo_asset_id')),
            eb('assets.id', '=', eb.ref('site_settings.favicon_asset_id')),
          ]),
        ),
      )
      .select('assets.file_id')
      .where('site_settings.tenant_id', '=', tenantId)
      .where('assets.tenant_id', '=', tenantId)
      .where('assets.lifecycle_state', '=', 'active')
      .execute(),
    moreTexts(db, tenantId),
  ]);
  const ids = new Set<string>(brand.map((b) => b.file_id));
  const texts = [
    ...pages.flatMap((p) => Object.values(p)),
    ...audiences.map((a) => a.metadata_override),
    ...versions.map((v) => v.content),
    ...experiences,
  ];
  const assetIds = new Set<string>();
  for (const text of texts) {
    if (typeof text !== 'string') continue;
    for (const [id] of text.matchAll(FILE_ID)) ids.add(id);
    for (const [id] of text.matchAll(ASSET_ID)) assetIds.add(id);
  }
  for (const fileId of await filesOfAssets(db, tenantId, [...assetIds])) ids.add(fileId);
  return ids;
}

/** The files of the tenant's active assets among `assetIds` and of their active children (variants). */
async function filesOfAssets(db: Kysely<Database>, tenantId: string, assetIds: string[]): Promise<string[]> {
  const files: string[] = [];
  for (let i = 0; i < assetIds.length; i += ASSETS_PER_READ) {
    const chunk = assetIds.slice(i, i + ASSETS_PER_READ);
    const rows = await db
      .selectFrom('assets')
      .select('file_id')
      .where('tenant_id', '=', tenantId)
      .where('lifecycle_state', '=', 'active')
      .where((eb) => eb.or([eb('id', 'in', chunk), eb('parent_asset_id', 'in', chunk)]))
      .execute();
    files.push(...rows.map((r) => r.file_id));
  }
  return files;
}

/**
 * The referenced set, kept per tenant while its change sequence (`site:<tenant>`, moved by triggers
 * on pages, audiences, versions, site settings and experiences, and by an asset's change of state) stands still,
 * so a served page's images cost one counter read.
 */
type Loading = { db: Kysely<Database>; tenantId: string; moreTexts: MoreServedTexts };
const kept = countedCache(CACHES.servedFiles, async ({ db, tenantId, moreTexts }: Loading) => ({
  ids: await referencedFiles(db, tenantId, moreTexts),
}));

/** Whether the tenant's domains serve `fileId`. */
export async function isServedFile(db: Kysely<Database>, moreTexts: MoreServedTexts, tenantId: string, fileId: string): Promise<boolean> {
  return (await kept(db, tenantId, '', { db, tenantId, moreTexts })).ids.has(fileId);
}
