import { noteSiteChange } from '../db/changes.js';
import type { Kysely, Transaction } from 'kysely';
import { lockExclusive } from '../db/locks.js';
import type { AssetsTable, Database, FilesTable } from '../db/types.js';
import { conflict, invalidField } from '../http/errors.js';
import { keysetList, NEWEST_FIRST } from '../http/pagination.js';
import { newId } from '../ids.js';
import { emit } from '../events/index.js';
import { after, now } from '../time.js';
import { IMAGE_TYPES, type ImageType } from '../db/enums.js';
import { type InspectedImage, type UrlSigner, variantKey } from './files.js';
import { type Renditions, renditionsOf } from './renditions.js';
import { settle } from '../http/round-trip.js';
import type { Asset, AssetCreate, AssetListQuery, FileInfo } from './schemas.js';
import { AssetUpdate } from './schemas.js';
import type { FileStores } from './store.js';

type FileRef = Pick<FilesTable, 'id' | 'preview_content_type'>;

export function toAsset(row: AssetsTable, file: FileRef, signer: UrlSigner): Asset {
  const live = row.lifecycle_state !== 'deleted';
  return {
    assetId: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    purpose: row.purpose,
    tags: JSON.parse(row.tags) as string[],
    aiDescription: row.ai_description,
    parentAssetId: row.parent_asset_id,
    hidden: row.hidden === 1,
    data: { type: 'image', fileId: row.file_id },
    lifecycleState: row.lifecycle_state,
    downloadUrl: live ? signer.url(file.id, 'original') : null,
    previewDownloadUrl: live && file.preview_content_type !== null ? signer.url(file.id, 'preview') : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    trashedAt: row.trashed_at,
    deletedAt: row.deleted_at,
  };
}

const toFileInfo = (row: FilesTable): FileInfo => ({
  fileId: row.id,
  contentType: row.content_type,
  sizeBytes: Number(row.size_bytes),
  sha256: row.sha256,
  width: row.width,
  height: row.height,
  createdAt: row.created_at,
});

/**
 * Bytes first (`storeFileBytes`, outside any transaction: the database store writes on its own),
 * then the row (`insertFile`): a crash in between leaves unreferenced bytes, never a row without bytes.
 */
export async function storeFileBytes(stores: FileStores, bytes: Buffer, image: InspectedImage): Promise<string> {
  const id = newId('file');
  const store = stores.byName[stores.current];
  await store.put(id, bytes);
  if (image.preview) await store.put(`${id}.preview`, image.preview);
  for (const [name, made] of image.renditions?.files ?? []) await store.put(variantKey(id, name), made);
  return id;
}

export async function insertFile(
  db: Kysely<Database>,
  stores: FileStores,
  tenantId: string,
  id: string,
  contentType: ImageType,
  bytes: Buffer,
  image: InspectedImage,
): Promise<FileInfo> {
  const row: FilesTable = {
    id,
    tenant_id: tenantId,
    content_type: contentType,
    size_bytes: bytes.length,
    sha256: image.sha256,
    width: image.width,
    height: image.height,
    preview_content_type: image.preview ? 'image/webp' : null,
    store: stores.current,
    created_at: now(),
    deleted_at: null,
    // Bytes that decode only partly have none, and are not tried again by the backfill.
    renditions: JSON.stringify(image.renditions?.made ?? { widths: [], webp: false }),
    renditions_lease_until: null,
  };
  await db.insertInto('files').values(row).execute();
  return toFileInfo(row);
}

/** A live file by id, for downloads (the signature already proves who may read it). */
export function findFile(db: Kysely<Database>, fileId: string) {
  return db.selectFrom('files').selectAll().where('id', '=', fileId).where('deleted_at', 'is', null).executeTakeFirst();
}

/** A live (not trashed, not deleted) image asset of the tenant, for pages and audiences to show. */
export function findLiveImageAsset(db: Kysely<Database>, tenantId: string, assetId: string) {
  return db
    .selectFrom('assets')
    .select(['id', 'file_id'])
    .where('id', '=', assetId)
    .where('tenant_id', '=', tenantId)
    .where('lifecycle_state', '=', 'active')
    .executeTakeFirst();
}

function findAsset(db: Kysely<Database>, tenantId: string, assetId: string) {
  return db
    .selectFrom('assets')
    .innerJoin('files', 'files.id', 'assets.file_id')
    .selectAll('assets')
    .select('files.preview_content_type')
    .where('assets.id', '=', assetId)
    .where('assets.tenant_id', '=', tenantId)
    .executeTakeFirst();
}

export async function getAsset(db: Kysely<Database>, tenantId: string, assetId: string, signer: UrlSigner): Promise<Asset | undefined> {
  const row = await findAsset(db, tenantId, assetId);
  return row && toAsset(row, { id: row.file_id, preview_content_type: row.preview_content_type }, signer);
}

export async function createAsset(trx: Transaction<Database>, tenantId: string, input: AssetCreate, signer: UrlSigner): Promise<Asset> {
  await lockExclusive(trx, `file:${input.fileId}`);
  const file = await trx
    .selectFrom('files')
    .select(['id', 'preview_content_type'])
    .where('id', '=', input.fileId)
    .where('tenant_id', '=', tenantId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!file) throw invalidField('/fileId', 'is not a file of this tenant');
  if (input.parentAssetId !== undefined) {
    const parent = await trx
      .selectFrom('assets')
      .select('id')
      .where('id', '=', input.parentAssetId)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
    if (!parent) throw invalidField('/parentAssetId', 'is not an asset of this tenant');
  }
  const at = now();
  const row: AssetsTable = {
    id: newId('asset'),
    tenant_id: tenantId,
    name: input.name,
    purpose: input.purpose ?? '',
    tags: '[]',
    ai_description: null,
    parent_asset_id: input.parentAssetId ?? null,
    hidden: input.hidden ? 1 : 0,
    file_id: file.id,
    lifecycle_state: 'active',
    created_at: at,
    updated_at: at,
    trashed_at: null,
    deleted_at: null,
  };
  await trx.insertInto('assets').values(row).execute();
  const asset = toAsset(row, file, signer);
  await emit(trx, tenantId, 'asset.created', asset);
  return asset;
}

/** Undefined when there is no such asset; a deleted asset cannot change (409). */
export async function updateAsset(
  trx: Transaction<Database>,
  tenantId: string,
  assetId: string,
  body: AssetUpdate,
  signer: UrlSigner,
): Promise<Asset | undefined> {
  const current = await findAsset(trx, tenantId, assetId);
  if (!current) return undefined;
  if (current.lifecycle_state === 'deleted') throw conflict('The asset is deleted and can no longer change');
  const shown = toAsset(current, { id: current.file_id, preview_content_type: current.preview_content_type }, signer);
  const patch = settle(AssetUpdate, body, shown);
  if (Object.keys(patch).length === 0) return shown;
  if (patch.lifecycleState === 'deleted') throw invalidField('/lifecycleState', 'cannot be deleted here: DELETE the asset');
  const at = after(current.updated_at);
  const changes: Partial<AssetsTable> = { updated_at: at };
  if (patch.name !== undefined) changes.name = patch.name;
  if (patch.purpose !== undefined) changes.purpose = patch.purpose;
  if (patch.tags !== undefined) changes.tags = JSON.stringify(patch.tags);
  if (patch.hidden !== undefined) changes.hidden = patch.hidden ? 1 : 0;
  if (patch.lifecycleState !== undefined) {
    changes.lifecycle_state = patch.lifecycleState;
    changes.trashed_at = patch.lifecycleState === 'trashed' ? at : null;
  }
  await trx.updateTable('assets').set(changes).where('id', '=', assetId).where('lifecycle_state', '!=', 'deleted').execute();
  // A brand's image is shown, and its file served on the tenant's domains, while its asset is active.
  if (patch.lifecycleState !== undefined) await noteSiteChange(trx, tenantId);
  const asset = await getAsset(trx, tenantId, assetId, signer);
  await emit(trx, tenantId, 'asset.updated', asset);
  return asset;
}

/**
 * Marks the asset deleted. When no other asset that is not deleted uses its file, the file is
 * marked deleted too, and its bytes are returned for the caller to remove once this commits.
 * Undefined when there is no such asset; deleting a deleted asset changes nothing.
 */
export async function deleteAsset(
  trx: Transaction<Database>,
  tenantId: string,
  assetId: string,
  signer: UrlSigner,
): Promise<{ removeFile?: FilesTable } | undefined> {
  const current = await trx.selectFrom('assets').selectAll().where('id', '=', assetId).where('tenant_id', '=', tenantId).executeTakeFirst();
  if (!current) return undefined;
  if (current.lifecycle_state === 'deleted') return {};
  await lockExclusive(trx, `file:${current.file_id}`);
  const at = after(current.updated_at);
  const deleted = await trx
    .updateTable('assets')
    .set({ lifecycle_state: 'deleted', deleted_at: at, updated_at: at })
    .where('id', '=', assetId)
    .returningAll()
    .executeTakeFirstOrThrow();
  await noteSiteChange(trx, tenantId);
  await emit(trx, tenantId, 'asset.deleted', toAsset(deleted, { id: deleted.file_id, preview_content_type: null }, signer));
  const stillUsed = await trx
    .selectFrom('assets')
    .select('id')
    .where('file_id', '=', current.file_id)
    .where('lifecycle_state', '!=', 'deleted')
    .limit(1)
    .executeTakeFirst();
  if (stillUsed) return {};
  const file = await trx
    .updateTable('files')
    .set({ deleted_at: at })
    .where('id', '=', current.file_id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { removeFile: file };
}

const assetsList = keysetList({ name: 'assets', table: 'assets', ...NEWEST_FIRST });

/** The tenant's active assets newest first, or one asset's variants (its children): the console's picker and library. */
export async function listAssets(db: Kysely<Database>, tenantId: string, query: AssetListQuery, signer: UrlSigner) {
  const parent = query.parentAssetId;
  const base = db
    .selectFrom('assets')
    .where('assets.tenant_id', '=', tenantId)
    .where('assets.lifecycle_state', '=', 'active')
    .$if(parent !== undefined, (q) => q.where('assets.parent_asset_id', '=', parent ?? ''));
  const rows = base.innerJoin('files', 'files.id', 'assets.file_id').selectAll('assets').select('files.preview_content_type');
  return assetsList.read({
    query,
    filters: { parent: parent ?? null },
    rows,
    count: base,
    map: (row) => toAsset(row, { id: row.file_id, preview_content_type: row.preview_content_type }, signer),
  });
}

/** An image a page shows: its file, its size, and the files of the asset's variants (its live children), for a srcset. */
export interface ShownImage {
  assetId: string;
  name: string;
  fileId: string;
  contentType: string;
  width: number;
  height: number;
  /** The 320 px WebP made on upload, when there is one. */
  hasPreview: boolean;
  /** The widths made by sharp (issue 46); undefined until the backfill has made them. */
  renditions: Renditions | undefined;
  variants: { fileId: string; width: number; height: number }[];
}

/**
 * The live image assets among `assetIds` that belong to the tenant, by id (one query for the
 * assets, one for their variants): what a section may show. An id missing from the map is
 * another tenant's, unknown, trashed, deleted or not an image.
 */
export async function findShownImages(db: Kysely<Database>, tenantId: string, assetIds: string[]): Promise<Map<string, ShownImage>> {
  const ids = [...new Set(assetIds)];
  const found = new Map<string, ShownImage>();
  if (ids.length === 0) return found;
  const live = db
    .selectFrom('assets')
    .innerJoin('files', 'files.id', 'assets.file_id')
    .where('assets.tenant_id', '=', tenantId)
    .where('assets.lifecycle_state', '=', 'active')
    .where('files.deleted_at', 'is', null)
    .where('files.content_type', 'in', IMAGE_TYPES);
  const rows = await live
    .select([
      'assets.id',
      'assets.name',
      'files.id as fileId',
      'files.content_type',
      'files.width',
      'files.height',
      'files.preview_content_type',
      'files.renditions',
    ])
    .where('assets.id', 'in', ids)
    .execute();
  for (const r of rows) {
    found.set(r.id, {
      assetId: r.id,
      name: r.name,
      fileId: r.fileId,
      contentType: r.content_type,
      width: Number(r.width),
      height: Number(r.height),
      hasPreview: r.preview_content_type !== null,
      renditions: renditionsOf(r),
      variants: [],
    });
  }
  if (found.size === 0) return found;
  const children = await live
    .select(['assets.parent_asset_id', 'files.id as fileId', 'files.width', 'files.height'])
    .where('assets.parent_asset_id', 'in', [...found.keys()])
    .execute();
  for (const c of children) {
    if (c.parent_asset_id !== null)
      found.get(c.parent_asset_id)?.variants.push({ fileId: c.fileId, width: Number(c.width), height: Number(c.height) });
  }
  return found;
}

/** An active image asset's file, as a served page shows it (logo, favicon); undefined once trashed or gone. */
export function findShownImage(db: Kysely<Database>, tenantId: string, assetId: string) {
  return db
    .selectFrom('assets')
    .innerJoin('files', 'files.id', 'assets.file_id')
    .select(['files.id as fileId', 'files.content_type as contentType', 'files.width', 'files.height', 'assets.name'])
    .where('assets.id', '=', assetId)
    .where('assets.tenant_id', '=', tenantId)
    .where('assets.lifecycle_state', '=', 'active')
    .where('files.deleted_at', 'is', null)
    .executeTakeFirst();
}
