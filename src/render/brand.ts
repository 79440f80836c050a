import type { SITE_FONTS } from '../db/enums.js';
import { renderMarkdown } from './content.js';
import { fontFaces, fontPreload, fontStack, isSelfHosted } from './fonts.js';
import { attr, text, url } from './html.js';

/** The tenant's brand as a document shows it: settings already validated, assets resolved to files. */
export interface Brand {
  brandColor: string;
  textColor: string;
  backgroundColor: string;
  font: (typeof SITE_FONTS)[number];
  footerText: string | null;
  privacyUrl: string | null;
  logo?: Picture;
  favicon?: Picture;
}

/** An image file of the tenant: where it is served, its type and its size in pixels. */
export interface Picture {
  src: string;
  contentType: string;
  width: number;
  height: number;
  alt: string;
}

/** System font stacks: every one is on the visitor's device, so a page never fetches a font. */
const FONT_STACKS: Record<string, string> = {
  system: 'system-ui,-apple-system,"Segoe UI",Roboto,sans-serif',
  serif: 'Charter,"Bitstream Charter","Sitka Text",Cambria,Georgia,serif',
  rounded: 'ui-rounded,"Hiragino Maru Gothic ProN",Quicksand,Comfortaa,Manjari,"Arial Rounded MT Bold",Calibri,sans-serif',
  mono: 'ui-monospace,"Cascadia Code","Source Code Pro",Menlo,Consolas,"DejaVu Sans Mono",monospace',
};

const HEX = /^#[0-9a-f]{6}$/;
/**
 * Only a value of the one shape the API accepts reaches CSS: the PATCH validated it, and this
 * checks again, so a row written any other way can never close the rule or the style element.
 */
const color = (value: string, fallback: string) => (HEX.test(value) ? value : fallback);
/** The brand colour of a tenant that never set one (site-settings' default). */
export const DEFAULT_BRAND_COLOR = '#0b57d0';

/** The logo's height in CSS pixels; its width follows from the file's, so the box is known before it loads. */
export const LOGO_HEIGHT = 40;

/** The rules that put the brand over the default style (src/render/style.ts). */
export function brandCss(brand: Brand): string {
  const b = color(brand.brandColor, '#0b57d0');
  const t = color(brand.textColor, '#1f2328');
  const bg = color(brand.backgroundColor, '#ffffff');
  const font = isSelfHosted(brand.font) ? fontStack(brand.font) : (FONT_STACKS[brand.font] ?? FONT_STACKS.system);
  const onBrand = readableOn(b);
  // The muted band: the background leaning a little towards the text, unless that costs the text its contrast.
  const muted = mix(bg, t, 0.06);
  return [
    isSelfHosted(brand.font) ? fontFaces(brand.font) : '',
    `body{color:${t};background:${bg};font-family:${font}}`,
    `.b-muted{background:${contrast(muted, t) >= 4.5 ? muted : bg}}.b-brand{background:${b};color:${onBrand}}`,
    `.b-brand .button,.b-brand button{background:${onBrand};color:${b}}.b-brand .lead button{background:${b};color:#fff}.steps li::before{background:${b};color:${readableOn(b)}}`,
    `.b-muted :is(.card,.plan){background:${bg}}.plan.hi{border-color:${b}}.quote{border-left-color:${b}}`,
    `a{color:${b}}a:focus-visible,button:focus-visible,input:focus-visible{outline-color:${b}}`,
    `.button,button{background:${b};color:#fff}.sub,footer{color:${t}}`,
    `.logo{margin-right:auto}.logo img{display:block;height:${LOGO_HEIGHT}px;width:auto}`,
    'header.top .wrap{align-items:center;gap:1rem}.brand-foot{display:block}.brand-foot p{margin:0 0 .5rem}',
  ].join('');
}

/** A self-hosted brand font's headline weight, preloaded; '' for a system stack. */
export const brandFontPreload = (brand: Brand | undefined) => (brand && isSelfHosted(brand.font) ? fontPreload(brand.font) : '');
const channels = (hex: string) => [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
/** WCAG 2 relative luminance of a `#rrggbb` colour. */
function luminance(hex: string): number {
  const [r = 0, g = 0, b = 0] = channels(hex).map((c) => {
    const v = c / 255;
    return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
/** WCAG 2 contrast ratio of two `#rrggbb` colours (1 to 21). */
export function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}
/** White or near-black, whichever reads better on `background`. */
export const readableOn = (background: string): string =>
  contrast(background, '#ffffff') >= contrast(background, '#111827') ? '#ffffff' : '#111827';
/** `a` moved `share` of the way towards `b`, as `#rrggbb`. */
function mix(a: string, b: string, share: number): string {
  const [x, y] = [channels(a), channels(b)];
  return `#${x
    .map((c, i) =>
      Math.round(c + ((y[i] ?? c) - c) * share)
        .toString(16)
        .padStart(2, '0'),
    )
    .join('')}`;
}

/** The width, in CSS pixels, the logo takes at `LOGO_HEIGHT`. */
const logoWidth = (logo: Picture) => Math.max(1, Math.round((logo.width * LOGO_HEIGHT) / logo.height));

export const logoImg = (logo: Picture) =>
  `<span class="logo"><img src="${attr(logo.src)}" alt="${attr(logo.alt)}" width="${logoWidth(logo)}" height="${LOGO_HEIGHT}"></span>`;

export const faviconLink = (favicon: Picture) => `<link rel="icon" href="${attr(favicon.src)}" type="${attr(favicon.contentType)}">`;

/**
 * The icon of a page whose brand has no image for it: a square of the brand colour (white text on
 * it is at least 4.5:1, site-settings' check) with the title's first letter or digit, escaped as
 * SVG text. `/favicon.ico` answers the same image.
 */
export function initialIcon(brandColor: string | undefined, title: string): string {
  const fill = color(brandColor ?? '', DEFAULT_BRAND_COLOR);
  const initial = (/[\p{L}\p{N}]/u.exec(title)?.[0] ?? '').toLocaleUpperCase('en');
  return [
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">',
    `<rect width="64" height="64" rx="12" fill="${fill}"/>`,
    '<text x="32" y="45" font-family="system-ui,sans-serif" font-size="38" font-weight="700" fill="#fff" text-anchor="middle">',
    `${text(initial)}</text></svg>`,
  ].join('');
}

/** The tab's icon: the brand's favicon, else its logo, else the brand colour with the title's initial. */
export function faviconOf(brand: Brand | undefined, title: string): string {
  const picture = brand?.favicon ?? brand?.logo;
  if (picture) return faviconLink(picture);
  const svg = `data:image/svg+xml,${encodeURIComponent(initialIcon(brand?.brandColor, title))}`;
  return `<link rel="icon" href="${attr(svg)}" type="image/svg+xml">`;
}

/** The footer's text (Markdown, rendered safe) and the privacy link; empty when there is neither. */
export function brandFooter(brand: Brand): string {
  const privacy = brand.privacyUrl ? url(brand.privacyUrl) : undefined;
  if (!brand.footerText && !privacy) return '';
  return `<div class="wrap brand-foot">${brand.footerText ? renderMarkdown(brand.footerText, {}) : ''}${
    privacy ? `<p><a href="${privacy}">Privacy policy</a></p>` : ''
  }</div>`;
}
