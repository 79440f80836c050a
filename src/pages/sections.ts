import type { Kysely } from 'kysely';
import { findShownImages } from '../assets/index.js';
import type { Database } from '../db/types.js';
import { AppError, type FieldError } from '../http/errors.js';
import { throwIfAny } from '../http/round-trip.js';
import { hasItems, ITEM_BOUNDS, ITEM_FIELDS, ITEM_KEYS, LAYOUT_FIELDS, type Layout, type Section } from './section-schema.js';
import type { Content } from './schemas.js';

/** Every field a section may carry besides heading, body and layout. */
const SECTION_FIELDS = ['variant', 'imageAssetId', 'imageAlt', 'imageSide', 'items', 'author', 'role', 'actionId', 'videoUrl'] as const;

export const layoutOf = (section: Pick<Section, 'layout'>): Layout => section.layout ?? 'text';

/** A video the page may embed: where it plays (the privacy-enhanced host) and the origin its frame comes from. */
export interface Video {
  embedUrl: string;
  frameOrigin: string;
}

const YOUTUBE_ID = /^[A-Za-z0-9_-]{11}$/;
const YOUTUBE_HOSTS = new Set(['youtube.com', 'www.youtube.com', 'm.youtube.com', 'youtube-nocookie.com', 'www.youtube-nocookie.com']);
const VIMEO_HOSTS = new Set(['vimeo.com', 'www.vimeo.com', 'player.vimeo.com']);

/**
 * A YouTube or Vimeo URL as the player's privacy-enhanced address (youtube-nocookie.com;
 * player.vimeo.com with dnt=1), or undefined for anything else. Only the video's id reaches the
 * embed URL: nothing else of what was written is carried into the frame's address.
 */
export function videoOf(written: string): Video | undefined {
  const parsed = URL.parse(written.trim());
  if (parsed?.protocol !== 'https:') return undefined;
  if (parsed.username || parsed.password || parsed.port) return undefined;
  const host = parsed.hostname.toLowerCase();
  const path = parsed.pathname.split('/').filter(Boolean);
  let youtube: string | undefined;
  if (host === 'youtu.be' && path.length === 1) youtube = path[0];
  else if (YOUTUBE_HOSTS.has(host)) {
    if (path.length === 1 && path[0] === 'watch') youtube = parsed.searchParams.get('v') ?? undefined;
    else if (path.length === 2 && (path[0] === 'embed' || path[0] === 'shorts' || path[0] === 'live')) youtube = path[1];
  }
  if (youtube !== undefined) {
    return YOUTUBE_ID.test(youtube)
      ? { embedUrl: `https://www.youtube-nocookie.com/embed/${youtube}?autoplay=1`, frameOrigin: 'https://www.youtube-nocookie.com' }
      : undefined;
  }
  if (!VIMEO_HOSTS.has(host)) return undefined;
  // vimeo.com/<id>[/<hash>] or player.vimeo.com/video/<id>[?h=<hash>]: an unlisted video needs its hash.
  const rest = host === 'player.vimeo.com' ? (path[0] === 'video' ? path.slice(1) : []) : path;
  const [id, hashInPath] = rest;
  if (id === undefined || !/^[0-9]{1,12}$/.test(id) || rest.length > 2) return undefined;
  const hash = hashInPath ?? parsed.searchParams.get('h') ?? undefined;
  if (hash !== undefined && !/^[0-9a-f]{1,32}$/.test(hash)) return undefined;
  return {
    embedUrl: `https://player.vimeo.com/video/${id}?dnt=1&autoplay=1${hash ? `&h=${hash}` : ''}`,
    frameOrigin: 'https://player.vimeo.com',
  };
}

/** The asset ids a content's sections name, each with its pointer under `path`. */
export function imageRefs(content: Content, path: string): { assetId: string; pointer: string }[] {
  const refs: { assetId: string; pointer: string }[] = [];
  content.sections.forEach((s, i) => {
    if (s.imageAssetId !== undefined) refs.push({ assetId: s.imageAssetId, pointer: `${path}/sections/${i}/imageAssetId` });
    s.items?.forEach((item, j) => {
      if (item.imageAssetId !== undefined)
        refs.push({ assetId: item.imageAssetId, pointer: `${path}/sections/${i}/items/${j}/imageAssetId` });
    });
  });
  return refs;
}

/** What each section's layout requires, without the database: fields, item counts, the video's host, the action. */
export function layoutErrors(content: Content, actionIds: readonly string[], path: string): FieldError[] {
  const errors: FieldError[] = [];
  content.sections.forEach((section, i) => {
    const at = `${path}/sections/${i}`;
    const layout = layoutOf(section);
    const allowed = LAYOUT_FIELDS[layout];
    const record = section as Record<string, unknown>;
    for (const field of SECTION_FIELDS) {
      const present = record[field] !== undefined;
      if (present && !allowed.includes(field) && !allowed.includes(`${field}?`)) {
        errors.push({ path: `${at}/${field}`, message: `is not a field of a ${layout} section` });
      } else if (!present && allowed.includes(field)) {
        errors.push({ path: `${at}/${field}`, message: `is required in a ${layout} section` });
      }
    }
    if (hasItems(layout)) {
      const [min, max] = ITEM_BOUNDS[layout];
      const items = section.items ?? [];
      if (section.items !== undefined && (items.length < min || items.length > max)) {
        errors.push({ path: `${at}/items`, message: `must have ${min} to ${max} items in a ${layout} section` });
      }
      const fields: readonly string[] = ITEM_FIELDS[layout];
      items.forEach((item, j) => {
        const itemRecord = item as Record<string, unknown>;
        for (const key of ITEM_KEYS) {
          const present = itemRecord[key] !== undefined;
          if (present && !fields.includes(key) && !fields.includes(`${key}?`)) {
            errors.push({ path: `${at}/items/${j}/${key}`, message: `is not a field of a ${layout} item` });
          } else if (!present && fields.includes(key)) {
            errors.push({ path: `${at}/items/${j}/${key}`, message: `is required in a ${layout} item` });
          }
        }
        if (item.actionId !== undefined && !actionIds.includes(item.actionId)) {
          errors.push({ path: `${at}/items/${j}/actionId`, message: "is not the actionId of one of the page's actions" });
        }
      });
      // One plan stands out, or none: a second highlighted one is named, not silently dropped.
      const highlighted = items.flatMap((item, j) => (item.highlighted === true ? [j] : []));
      for (const j of highlighted.slice(1)) {
        errors.push({ path: `${at}/items/${j}/highlighted`, message: 'at most one plan of a pricing section is highlighted' });
      }
    }
    if (layout === 'cta' && section.actionId !== undefined && !actionIds.includes(section.actionId)) {
      errors.push({ path: `${at}/actionId`, message: "is not the actionId of one of the page's actions" });
    }
    if (layout === 'video' && section.videoUrl !== undefined && !videoOf(section.videoUrl)) {
      errors.push({
        path: `${at}/videoUrl`,
        message: 'must be an https YouTube or Vimeo video URL, like https://www.youtube.com/watch?v=… or https://vimeo.com/…',
      });
    }
  });
  return errors;
}

/** A content's bound: its JSON, as stored, at most 512 KB (issue 45), so no list or render carries megabytes. */
export const MAX_CONTENT_BYTES = 512 * 1024;

/**
 * A content larger than MAX_CONTENT_BYTES is a 413 naming the bound and `path`, before any other
 * check: its size, not its shape, is what is wrong. `subject` says how the field holds the content. Measured as the UTF-8 bytes of its JSON, as stored.
 */
export function checkContentSize(content: Content | null | undefined, path = '/content', subject = 'is'): void {
  if (content === null || content === undefined) return;
  const bytes = Buffer.byteLength(JSON.stringify(content), 'utf8');
  if (bytes <= MAX_CONTENT_BYTES) return;
  const message = `${subject} ${bytes} bytes as JSON; a content is at most 512 KB (${MAX_CONTENT_BYTES} bytes)`;
  throw new AppError('payload_too_large', `${path} ${message}`, [{ path, message }]);
}

/**
 * The errors of a content as written anywhere (a page, an audience's version, the page agent):
 * each layout's fields and bounds, and each image a live image asset of the tenant. `actionIds`:
 * the page's actions (after the same request's changes), which a cta section must name. A
 * content over its bound is thrown as a 413 (checkContentSize), not listed.
 */
export async function contentErrors(
  db: Kysely<Database>,
  tenantId: string,
  content: Content | null | undefined,
  actionIds: readonly string[],
  path = '/content',
): Promise<FieldError[]> {
  if (content === null || content === undefined) return [];
  checkContentSize(content, path);
  const errors = layoutErrors(content, actionIds, path);
  const refs = imageRefs(content, path);
  const found = await findShownImages(
    db,
    tenantId,
    refs.map((r) => r.assetId),
  );
  for (const ref of refs) {
    if (!found.has(ref.assetId)) errors.push({ path: ref.pointer, message: 'is not a live image asset of this tenant' });
  }
  return errors;
}

/** `contentErrors`, thrown as one 400 naming every field. */
export async function checkContent(
  db: Kysely<Database>,
  tenantId: string,
  content: Content | null | undefined,
  actionIds: readonly string[],
  path = '/content',
): Promise<void> {
  throwIfAny(await contentErrors(db, tenantId, content, actionIds, path));
}
