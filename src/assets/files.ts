import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { ImageType } from '../db/enums.js';
import type { Database } from '../db/types.js';
import { now } from '../time.js';
import type { FilesTable } from '../db/types.js';
import { type MadeRenditions, makeRenditions, type RenditionName, renditionNames, renditionsOf, renditionType } from './renditions.js';

export const MAX_FILE_BYTES = 10 * 1024 * 1024;
const PREVIEW_WIDTH = 320;

/** The type the bytes really are, from their magic number (never from what the client says). */
export function sniffImageType(bytes: Buffer): ImageType | undefined {
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.length >= 6 && /^GIF8[79]a$/.test(bytes.subarray(0, 6).toString('latin1'))) return 'image/gif';
  if (bytes.length >= 12 && bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP')
    return 'image/webp';
  return undefined;
}

export interface InspectedImage {
  width: number;
  height: number;
  sha256: string;
  /** A WebP at most 320 px wide; undefined when none could be made. */
  preview?: Buffer;
  /** The image at every width (issue 46 §5); undefined for bytes that decode only partly. */
  renditions?: MadeRenditions;
}

/**
 * Dimensions and a preview, decoded by sharp; undefined when the bytes do not decode as an image.
 * sharp (libvips) is loaded on the first upload, not at start-up: most processes never decode an
 * image, and it holds several megabytes.
 */
export async function inspectImage(bytes: Buffer): Promise<InspectedImage | undefined> {
  const { default: sharp } = await import('sharp');
  let width: number | undefined;
  let height: number | undefined;
  try {
    ({ width, height } = await sharp(bytes).metadata());
  } catch {
    return undefined;
  }
  if (!width || !height) return undefined;
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  try {
    const preview = await sharp(bytes).resize({ width: PREVIEW_WIDTH, withoutEnlargement: true }).webp().toBuffer();
    const type = sniffImageType(bytes);
    const renditions = type && (await makeRenditions(bytes, type, width));
    return { width, height, sha256, preview, ...(renditions ? { renditions } : {}) };
  } catch {
    // A header can be intact over a broken body: only a full decode tells a bad image from one
    // that is merely impossible to preview.
    try {
      await sharp(bytes).raw().toBuffer();
    } catch {
      return undefined;
    }
    return { width, height, sha256 };
  }
}

/**
 * Download links: `<base>/files/<fileId>[/preview]?expires=<unix seconds>&signature=<HMAC-SHA256>`,
 * valid one hour, served without an API key. The key is FILE_URL_SECRET, or a secret generated
 * once and kept in the database, so that every instance signs and verifies alike.
 */
/** A file as stored, the 320 px preview made of it with sharp, or one of its renditions (renditions.ts). */
export type FileVariant = 'original' | 'preview' | RenditionName;

/** The path after the file's: nothing for the original, else the variant's name. */
export const variantSuffix = (variant: FileVariant) => (variant === 'original' ? '' : `/${variant}`);
/** The variant's key in a file store: the file id, with the variant's name after a dot. */
export const variantKey = (fileId: string, variant: FileVariant) => (variant === 'original' ? fileId : `${fileId}.${variant}`);

/** The type a file's variant is served with; undefined when the file has no such variant. */
export function typeOfVariant(file: FilesTable, variant: FileVariant): string | undefined {
  if (variant === 'original') return file.content_type;
  if (variant === 'preview') return file.preview_content_type ?? undefined;
  return renditionNames(renditionsOf(file)).includes(variant) ? renditionType(variant, file.content_type) : undefined;
}

export interface UrlSigner {
  url(fileId: string, variant: FileVariant): string;
  verify(fileId: string, variant: FileVariant, expires: string | undefined, signature: string | undefined): boolean;
}

const VALID_SECONDS = 3600;

export function urlSigner(baseUrl: string, secret: string): UrlSigner {
  const sign = (fileId: string, variant: string, expires: number) =>
    createHmac('sha256', secret).update(`${fileId}:${variant}:${expires}`).digest('base64url');
  return {
    url(fileId, variant) {
      const expires = Math.floor(Date.now() / 1000) + VALID_SECONDS;
      return `${baseUrl}/files/${fileId}${variantSuffix(variant)}?expires=${expires}&signature=${sign(fileId, variant, expires)}`;
    },
    verify(fileId, variant, expires, signature) {
      if (!expires || !signature || !/^\d{1,12}$/.test(expires)) return false;
      const at = Number(expires);
      if (at < Date.now() / 1000) return false;
      const expected = Buffer.from(sign(fileId, variant, at));
      const given = Buffer.from(signature);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

/** The configured secret, or the one generated by the first instance to need it. */
export function fileUrlSecret(db: Kysely<Database>, configured: string | undefined): Promise<string> {
  return keptSecret(db, 'file_url_secret', configured);
}

/**
 * A service secret by name: the configured one, or 256 random bits generated by the first instance
 * to need it and kept in the database, so every instance has the same. Kept here because this
 * area owns `service_secrets`; the integrations' key (INTEGRATIONS_SECRET) is handed in by app.ts.
 */
export async function keptSecret(db: Kysely<Database>, name: string, configured: string | undefined): Promise<string> {
  if (configured !== undefined) return configured;
  await db
    .insertInto('service_secrets')
    .values({ name, value: randomBytes(32).toString('base64url'), created_at: now() })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db.selectFrom('service_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  return row.value;
}

/** The key the tenants' secrets are sealed with (integrations/secrets.ts): one to seal with, and an old one only to open with. */
export interface KeptKey {
  sealing: string | undefined;
  legacy: string | undefined;
}

/**
 * INTEGRATIONS_SECRET, or where it is unset, a key that is never kept beside the ciphertext: a
 * database backup must not hold both. On SQLite it lives in `keyFile` (`secret.key` next to the
 * database file, mode 0600), generated by the first process to need it; a key an older version
 * kept in `service_secrets` moves to the file (so what it sealed still opens) and leaves the
 * database. On PostgreSQL (`keyFile` undefined) there is no file every instance shares, so nothing
 * is generated: sealing is refused (409 `secret_not_configured`), and an old key in the database
 * still opens what it sealed until it is replaced.
 */
export async function keptKey(
  db: Kysely<Database>,
  name: string,
  configured: string | undefined,
  keyFile: string | undefined,
): Promise<KeptKey> {
  const row = await db.selectFrom('service_secrets').select('value').where('name', '=', name).executeTakeFirst();
  if (configured !== undefined) return { sealing: configured, legacy: undefined };
  if (keyFile === undefined) return { sealing: undefined, legacy: row?.value };
  const key = keyInFile(keyFile, () => row?.value ?? randomBytes(32).toString('base64url'));
  if (row === undefined) return { sealing: key, legacy: undefined };
  // Moved: the database no longer holds a key to its own ciphertext. A different one (a database
  // restored beside a newer file) is kept, to open what it sealed.
  if (row.value === key) {
    await db.deleteFrom('service_secrets').where('name', '=', name).execute();
    return { sealing: key, legacy: undefined };
  }
  return { sealing: key, legacy: row.value };
}

/**
 * The key kept in `file` (mode 0600), which the first process to ask creates with `initial()`.
 * Two processes starting at once on one database (a service and the CLI, or two instances) must
 * read the same key: the first writes it whole under a name of its own, then links it into place,
 * which fails if another got there first. A reader never meets a file still being written; with
 * `wx` on the file itself, one did, and stopped as if the file had been emptied.
 */
export function keyInFile(file: string, initial: () => string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  if (!fs.existsSync(file)) {
    const draft = `${file}.${process.pid}-${randomBytes(6).toString('hex')}`;
    fs.writeFileSync(draft, `${initial()}\n`, { flag: 'wx', mode: 0o600 });
    try {
      fs.linkSync(draft, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      fs.rmSync(draft, { force: true });
    }
  }
  fs.chmodSync(file, 0o600);
  const key = fs.readFileSync(file, 'utf8').trim();
  if (key === '') throw new Error(`${file} is empty: restore it, or set INTEGRATIONS_SECRET`);
  return key;
}
