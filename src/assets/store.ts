import fs from 'node:fs/promises';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { FileStoreName } from '../config.js';
import type { Database } from '../db/types.js';
import { isIdShaped } from '../ids.js';

/**
 * Where the bytes of uploaded files live, behind one interface so that an object store can be
 * added later. The database holds every file's metadata, including which store has its bytes.
 */
export interface FileStore {
  put(key: string, bytes: Buffer): Promise<void>;
  get(key: string): Promise<Buffer | undefined>;
  delete(key: string): Promise<void>;
}

/** A folder; a file is written to a temporary name, flushed and renamed, so a crash leaves no half file. */
export function diskStore(dir: string): FileStore {
  const at = (key: string) => path.join(dir, safe(key));
  return {
    async put(key, bytes) {
      await fs.mkdir(dir, { recursive: true });
      const tmp = `${at(key)}.${process.pid}.tmp`;
      const handle = await fs.open(tmp, 'w');
      try {
        await handle.writeFile(bytes);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await fs.rename(tmp, at(key));
    },
    async get(key) {
      try {
        return await fs.readFile(at(key));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw err;
      }
    },
    async delete(key) {
      await fs.rm(at(key), { force: true });
    },
  };
}

/** The database itself: every instance of a multi-instance deployment serves every file. */
export function databaseStore(db: Kysely<Database>): FileStore {
  return {
    async put(key, bytes) {
      await db
        .insertInto('file_blobs')
        .values({ key, data: bytes })
        .onConflict((oc) => oc.column('key').doUpdateSet({ data: bytes }))
        .execute();
    },
    async get(key) {
      const row = await db.selectFrom('file_blobs').select('data').where('key', '=', key).executeTakeFirst();
      return row ? Buffer.from(row.data) : undefined;
    },
    async delete(key) {
      await db.deleteFrom('file_blobs').where('key', '=', key).execute();
    },
  };
}

/** Keys are file ids (with a `.preview` or rendition suffix); anything else must never reach the file system. */
function safe(key: string): string {
  if (!isIdShaped(key.replace(/\.(?:preview|w\d{1,4}(?:\.webp)?|webp)$/, ''))) throw new Error(`Invalid file store key: ${key}`);
  return key;
}

export interface FileStores {
  /** Where new files are written. */
  current: FileStoreName;
  byName: Record<FileStoreName, FileStore>;
}

export function fileStores(db: Kysely<Database>, dataDir: string, current: FileStoreName): FileStores {
  return { current, byName: { disk: diskStore(path.join(dataDir, 'files')), database: databaseStore(db) } };
}
