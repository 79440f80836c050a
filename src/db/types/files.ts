import type { FileStoreName } from '../../config.js';
import type { IMAGE_TYPES, LIFECYCLE_STATES } from '../enums.js';
import type { OneOf } from './one-of.js';

export interface FilesTable {
  id: string;
  tenant_id: string;
  content_type: OneOf<typeof IMAGE_TYPES>;
  size_bytes: number;
  sha256: string;
  width: number;
  height: number;
  /** Null when no preview could be made. */
  preview_content_type: string | null;
  /** Which store holds the bytes: a file keeps the store it was written to. */
  store: FileStoreName;
  created_at: string;
  /** Set when the last asset using the file was deleted and its bytes removed. */
  deleted_at: string | null;
  /** JSON of assets/renditions.ts's `Renditions`: the widths made by sharp; null until they are made. */
  renditions: string | null;
  /** Held by the instance making its renditions until then (assets/backfill.ts, db/lease.ts). */
  renditions_lease_until: string | null;
}

export interface FileBlobsTable {
  key: string;
  data: Buffer;
}

export interface AssetsTable {
  id: string;
  tenant_id: string;
  name: string;
  purpose: string;
  tags: string;
  ai_description: string | null;
  parent_asset_id: string | null;
  hidden: number;
  file_id: string;
  lifecycle_state: OneOf<typeof LIFECYCLE_STATES>;
  created_at: string;
  updated_at: string;
  trashed_at: string | null;
  deleted_at: string | null;
}
