import { Type, type Static } from '@sinclair/typebox';
import { IMAGE_TYPES, LIFECYCLE_STATES } from '../db/enums.js';
import { ListQuery, Nullable, NullableTimestamp, StringEnum, Timestamp } from '../http/schemas.js';
import { RoundTrip } from '../http/round-trip.js';

export const FileInfo = Type.Object(
  {
    fileId: Type.String(),
    contentType: StringEnum(IMAGE_TYPES),
    sizeBytes: Type.Integer({ minimum: 1 }),
    sha256: Type.String({ description: 'Hex SHA-256 of the bytes' }),
    width: Type.Integer({ minimum: 1 }),
    height: Type.Integer({ minimum: 1 }),
    createdAt: Timestamp,
  },
  { $id: 'FileInfo' },
);
export type FileInfo = Static<typeof FileInfo>;

export const Asset = Type.Object(
  {
    assetId: Type.String(),
    tenantId: Type.String(),
    name: Type.String(),
    purpose: Type.String(),
    tags: Type.Array(Type.String()),
    aiDescription: Nullable(Type.String()),
    parentAssetId: Nullable(Type.String()),
    hidden: Type.Boolean(),
    data: Type.Object({ type: Type.String(), fileId: Type.String() }),
    lifecycleState: StringEnum(LIFECYCLE_STATES),
    downloadUrl: Nullable(Type.String({ description: 'Signed, valid one hour; null once the asset is deleted' })),
    previewDownloadUrl: Nullable(Type.String({ description: 'A preview at most 320 px wide; null when none could be made' })),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    trashedAt: NullableTimestamp,
    deletedAt: NullableTimestamp,
  },
  { $id: 'Asset' },
);
export type Asset = Static<typeof Asset>;

export const AssetCreate = Type.Object(
  {
    assetType: StringEnum(['image'], { description: 'The only asset type is image' }),
    name: Type.String({ minLength: 1 }),
    purpose: Type.Optional(Type.String({ default: '' })),
    fileId: Type.String({ description: 'A file of the tenant, uploaded with POST /v0/files' }),
    parentAssetId: Type.Optional(Type.String({ description: 'An asset of the tenant' })),
    idempotencyKey: Type.Optional(
      Type.String({ minLength: 1, maxLength: 255, description: 'The same key and body within 24 hours replays the first response' }),
    ),
    hidden: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false, $id: 'AssetCreate' },
);
export type AssetCreate = Static<typeof AssetCreate>;

/** The asset's other fields as read (read-only); its signed links, made anew on every read, are ignored. */
export const AssetUpdate = RoundTrip(
  Asset,
  Type.Object(
    {
      name: Type.Optional(Type.String({ minLength: 1 })),
      purpose: Type.Optional(Type.String()),
      tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 50 })),
      hidden: Type.Optional(Type.Boolean()),
      lifecycleState: Type.Optional(
        StringEnum(LIFECYCLE_STATES, {
          description: 'trashed sets trashedAt; active restores; deleted only as read (DELETE deletes)',
        }),
      ),
    },
    { additionalProperties: false, $id: 'AssetUpdate' },
  ),
  { ignored: ['downloadUrl', 'previewDownloadUrl'] },
);
export type AssetUpdate = Static<typeof AssetUpdate>;

export const AssetParams = Type.Object({ asset_id: Type.String() });
export const AssetListQuery = ListQuery({
  parentAssetId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "Only this asset's variants (its children)" })),
});
export type AssetListQuery = Static<typeof AssetListQuery>;
export const FileParams = Type.Object({ fileId: Type.String() });
export const RenditionParams = Type.Object({
  fileId: Type.String(),
  rendition: Type.String({
    description:
      '`w<width>` (the original format at 320, 640, 960, 1280 or 1920 px, under the original width), `w<width>.webp`, or `webp` (WebP at the original width)',
  }),
});
export const DownloadQuery = Type.Object({ expires: Type.Optional(Type.String()), signature: Type.Optional(Type.String()) });
export type DownloadQuery = Static<typeof DownloadQuery>;
