import type { ImageType } from '../db/enums.js';
import type { FilesTable } from '../db/types.js';

/** The widths a page offers an image at (issue 46 §5), each one made only when the original is wider. */
export const RENDITION_WIDTHS = [320, 640, 960, 1280, 1920] as const;

/**
 * What was made of a file, kept as JSON on its row (`files.renditions`; null: not made yet, the
 * backfill's work). `widths`: the widths under the original's made in its own format, and in WebP
 * too when `webp`. `webp` is false for a WebP original (its own format is WebP) and when sharp
 * could make nothing: such a file is offered as it is.
 */
export interface Renditions {
  widths: number[];
  webp: boolean;
}

/**
 * A rendition's name: the suffix of its key in the file store and of its path after the file's
 * (`/_pam/files/<fileId>/w640.webp`). `w<width>`: the original's format at that width;
 * `w<width>.webp`: WebP at that width; `webp`: WebP at the original's width.
 */
export type RenditionName = `w${number}` | `w${number}.webp` | 'webp';

const NAME = /^(?:w(\d{1,4})(\.webp)?|webp)$/;

export function isRenditionName(value: string): value is RenditionName {
  return NAME.test(value);
}

const NONE: Renditions = { widths: [], webp: false };

/** The file's renditions as stored; undefined while they are not made. */
export function renditionsOf(file: Pick<FilesTable, 'renditions'>): Renditions | undefined {
  if (file.renditions === null) return undefined;
  try {
    const parsed = JSON.parse(file.renditions) as Partial<Renditions>;
    return { widths: Array.isArray(parsed.widths) ? parsed.widths.filter(Number.isInteger) : [], webp: parsed.webp === true };
  } catch {
    return NONE;
  }
}

/** The names a file's row says exist: what a route may serve, and what a delete removes. */
export function renditionNames(made: Renditions | undefined): RenditionName[] {
  if (!made) return [];
  const names: RenditionName[] = made.widths.map((w) => `w${w}` as const);
  if (made.webp) names.push(...made.widths.map((w) => `w${w}.webp` as const), 'webp');
  return names;
}

/** The type a rendition is served with: WebP, or the original's. */
export const renditionType = (name: RenditionName, original: ImageType): ImageType =>
  name === 'webp' || name.endsWith('.webp') ? 'image/webp' : original;

export interface MadeRenditions {
  made: Renditions;
  /** The bytes of each, by name. */
  files: Map<RenditionName, Buffer>;
}

/**
 * Every rendition of an image of `width` pixels, encoded by sharp one after another (a 10 MiB
 * upload decoded eleven times at once would hold eleven decoded copies). Animated GIF and WebP
 * keep their frames. Anything sharp fails on leaves the image with none: it is then offered as it
 * is, which is what pages did before.
 */
export async function makeRenditions(bytes: Buffer, type: ImageType, width: number): Promise<MadeRenditions> {
  const { default: sharp } = await import('sharp');
  const animated = type === 'image/gif' || type === 'image/webp';
  const widths = RENDITION_WIDTHS.filter((w) => w < width);
  const webp = type !== 'image/webp';
  const files = new Map<RenditionName, Buffer>();
  const encode = (w: number | undefined, format: 'webp' | 'own') => {
    let image = sharp(bytes, { animated });
    if (w !== undefined) image = image.resize({ width: w });
    if (format === 'webp') return image.webp({ quality: 80 }).toBuffer();
    if (type === 'image/jpeg') return image.jpeg({ quality: 82, progressive: true }).toBuffer();
    if (type === 'image/png') return image.png({ compressionLevel: 9 }).toBuffer();
    if (type === 'image/gif') return image.gif().toBuffer();
    return image.webp({ quality: 80 }).toBuffer();
  };
  try {
    for (const w of widths) {
      files.set(`w${w}`, await encode(w, 'own'));
      if (webp) files.set(`w${w}.webp`, await encode(w, 'webp'));
    }
    if (webp) files.set('webp', await encode(undefined, 'webp'));
  } catch {
    return { made: NONE, files: new Map() };
  }
  return { made: { widths, webp }, files };
}
