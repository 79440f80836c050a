import type { Kysely } from 'kysely';
import { findLiveImageAsset } from '../assets/index.js';
import type { Database } from '../db/types.js';
import { findFallbackDomain } from '../domains/index.js';
import type { FieldError } from '../http/errors.js';
import type { OriginOf } from '../http/public-origin.js';
import type { MetadataPartial } from './schemas.js';

const KINDS = ['og', 'twitter'] as const;

/** What a request may say about one image: its asset, or (audience overrides only) its url or file id directly. */
type ImageRequest = Record<string, unknown>;

/**
 * Lays the images a request names by asset id over merged metadata: an asset id sets the file id
 * and a public URL on the tenant's fallback domain (every tenant has one, and it cannot be removed,
 * so the URL stays valid); null removes the three. An image url or file id set directly (an
 * audience's override) drops a stored asset id, which no longer describes the image.
 */
export async function applyImageAssets(
  db: Kysely<Database>,
  tenantId: string,
  merged: MetadataPartial,
  request: ImageRequest,
  path: string,
  errors: FieldError[],
  originOf: OriginOf,
): Promise<MetadataPartial> {
  const result: Record<string, unknown> = { ...merged };
  for (const kind of KINDS) {
    const assetField = `${kind}ImageAssetId`;
    const assetId = request[assetField];
    if (assetId === undefined) {
      if (request[`${kind}ImageUrl`] !== undefined || request[`${kind}ImageFileId`] !== undefined) delete result[assetField];
      continue;
    }
    if (assetId === null) {
      for (const f of [assetField, `${kind}ImageFileId`, `${kind}ImageUrl`]) delete result[f];
      continue;
    }
    const asset = await findLiveImageAsset(db, tenantId, String(assetId));
    if (!asset) {
      errors.push({ path: `${path}/${assetField}`, message: 'is not a live image asset of this tenant' });
      continue;
    }
    result[assetField] = asset.id;
    result[`${kind}ImageFileId`] = asset.file_id;
    result[`${kind}ImageUrl`] = await publicFileUrl(db, tenantId, asset.file_id, originOf);
  }
  return result as MetadataPartial;
}

/** `<the public origin of the tenant's fallback domain>/_pam/files/<fileId>`, as the request reaches the service. */
async function publicFileUrl(db: Kysely<Database>, tenantId: string, fileId: string, originOf: OriginOf): Promise<string> {
  const domain = await findFallbackDomain(db, tenantId);
  return domain ? `${originOf(domain.hostname)}/_pam/files/${fileId}` : `/_pam/files/${fileId}`;
}
