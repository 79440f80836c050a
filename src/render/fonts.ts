import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { attr } from './html.js';

/** How a fallback face is drawn to take the web font's room: percentages of the font size. */
interface Metrics {
  sizeAdjust: number;
  ascent: number;
  descent: number;
}

interface SelfHosted {
  /** The family's name in CSS. */
  family: string;
  /** Its fallback is Times New Roman's shape, not Arial's. */
  serif: boolean;
  /** Measured by scripts/font-metrics.ts against Arial or Times New Roman, per weight. */
  metrics: Record<FontWeight, Metrics>;
}

/** The two weights served: body text and headlines (the latin subset of each, woff2). */
export const FONT_WEIGHTS = [400, 700] as const;
export type FontWeight = (typeof FONT_WEIGHTS)[number];

/**
 * The brand fonts a tenant's own domain serves (issue 46 §4), from the @fontsource packages: the
 * key is both the site setting and the package's name.
 */
export const SELF_HOSTED = {
  inter: {
    family: 'Inter',
    serif: false,
    metrics: { 400: { sizeAdjust: 107.02, ascent: 90.55, descent: 22.52 }, 700: { sizeAdjust: 102.47, ascent: 94.56, descent: 23.52 } },
  },
  'source-sans-3': {
    family: 'Source Sans 3',
    serif: false,
    metrics: { 400: { sizeAdjust: 93.21, ascent: 109.86, descent: 42.91 }, 700: { sizeAdjust: 91.89, ascent: 111.44, descent: 43.53 } },
  },
  'ibm-plex-sans': {
    family: 'IBM Plex Sans',
    serif: false,
    metrics: { 400: { sizeAdjust: 100.88, ascent: 101.61, descent: 27.26 }, 700: { sizeAdjust: 98.53, ascent: 104.03, descent: 27.91 } },
  },
  lora: {
    family: 'Lora',
    serif: true,
    metrics: { 400: { sizeAdjust: 115.23, ascent: 87.3, descent: 23.78 }, 700: { sizeAdjust: 112.1, ascent: 89.74, descent: 24.44 } },
  },
  merriweather: {
    family: 'Merriweather',
    serif: true,
    metrics: { 400: { sizeAdjust: 118.83, ascent: 82.81, descent: 22.97 }, 700: { sizeAdjust: 115.24, ascent: 85.39, descent: 23.69 } },
  },
  'playfair-display': {
    family: 'Playfair Display',
    serif: true,
    metrics: { 400: { sizeAdjust: 111.27, ascent: 97.24, descent: 22.56 }, 700: { sizeAdjust: 107.19, ascent: 100.94, descent: 23.42 } },
  },
} as const satisfies Record<string, SelfHosted>;

export type SelfHostedFont = keyof typeof SELF_HOSTED;
export const SELF_HOSTED_FONTS = Object.keys(SELF_HOSTED) as SelfHostedFont[];

export const isSelfHosted = (font: string): font is SelfHostedFont => Object.hasOwn(SELF_HOSTED, font);

const require = createRequire(import.meta.url);

/** Where the package keeps the font's latin woff2 of `weight` (its main entry is a CSS file beside `files/`). */
export function fontFile(font: SelfHostedFont, weight: FontWeight): string {
  const dir = path.dirname(require.resolve(`@fontsource/${font}`));
  return path.join(dir, 'files', `${font}-latin-${weight}-normal.woff2`);
}

export interface FontFile {
  font: SelfHostedFont;
  weight: FontWeight;
  /** Its name under /_pam/fonts/: the package's file name with a hash of its bytes, so a new version is a new URL. */
  name: string;
  bytes: Buffer;
  etag: string;
}

/**
 * Every file, read once when this module loads: a missing one (a package not installed, a
 * version without that subset) stops the service at start-up, never a visitor's page.
 */
function readFontFiles(): Map<string, FontFile> {
  const files = new Map<string, FontFile>();
  for (const font of SELF_HOSTED_FONTS) {
    for (const weight of FONT_WEIGHTS) {
      const file = fontFile(font, weight);
      if (!fs.existsSync(file)) throw new Error(`The brand font file ${file} is missing: install @fontsource/${font}`);
      const bytes = fs.readFileSync(file);
      const hash = createHash('sha256').update(bytes).digest('base64url').slice(0, 12);
      const name = `${font}-latin-${weight}-normal.${hash}.woff2`;
      files.set(name, { font, weight, name, bytes, etag: `"${hash}"` });
    }
  }
  return files;
}

export const FONT_FILES: ReadonlyMap<string, FontFile> = readFontFiles();

const nameOf = (font: SelfHostedFont, weight: FontWeight) =>
  [...FONT_FILES.values()].find((f) => f.font === font && f.weight === weight)?.name ?? '';

/** Where a tenant's domain serves the file (src/site/serve/fonts.ts). */
export const fontSrc = (font: SelfHostedFont, weight: FontWeight) => `/_pam/fonts/${nameOf(font, weight)}`;

const SANS_LOCAL = { 400: ['Arial', 'ArialMT', 'Liberation Sans'], 700: ['Arial Bold', 'Arial-BoldMT', 'Liberation Sans Bold'] };
const SERIF_LOCAL = {
  400: ['Times New Roman', 'TimesNewRomanPSMT', 'Liberation Serif'],
  700: ['Times New Roman Bold', 'TimesNewRomanPS-BoldMT', 'Liberation Serif Bold'],
};

/**
 * The font's faces and, under `<family> Fallback`, the device's Arial or Times New Roman drawn to
 * the same width and line box (size-adjust, ascent and descent overrides), so the text does not
 * move when the font arrives (`font-display: swap`: the text shows at once, in the fallback).
 */
export function fontFaces(font: SelfHostedFont): string {
  const about: SelfHosted = SELF_HOSTED[font];
  return FONT_WEIGHTS.map((weight) => {
    const m = about.metrics[weight];
    const local = (about.serif ? SERIF_LOCAL : SANS_LOCAL)[weight].map((name) => `local("${name}")`).join(',');
    return [
      `@font-face{font-family:"${about.family}";font-style:normal;font-weight:${weight};font-display:swap;src:url(${fontSrc(font, weight)}) format("woff2")}`,
      `@font-face{font-family:"${about.family} Fallback";font-style:normal;font-weight:${weight};src:${local};size-adjust:${m.sizeAdjust}%;ascent-override:${m.ascent}%;descent-override:${m.descent}%;line-gap-override:0%}`,
    ].join('');
  }).join('');
}

/** The font stack: the family, its matched fallback, then the system's. */
export function fontStack(font: SelfHostedFont): string {
  const about: SelfHosted = SELF_HOSTED[font];
  const generic = about.serif ? 'Georgia,serif' : 'system-ui,sans-serif';
  return `"${about.family}","${about.family} Fallback",${generic}`;
}

/** The headline's weight, fetched with the document rather than when the CSS is first applied. */
export const fontPreload = (font: SelfHostedFont) =>
  `<link rel="preload" href="${attr(fontSrc(font, 700))}" as="font" type="font/woff2" crossorigin>`;
