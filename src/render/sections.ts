import type { Static } from '@sinclair/typebox';
import type { FileVariant } from '../assets/files.js';
import type { ShownImage } from '../assets/repository.js';
import type { Section, SectionItem } from '../pages/section-schema.js';
import { layoutOf, videoOf } from '../pages/sections.js';
import type { Action, Content } from '../pages/schemas.js';
import { fillTokens, renderMarkdown, type TokenValues } from './content.js';
import { attr, text } from './html.js';

type PageAction = Static<typeof Action>;

/** What a section needs from the document around it. */
export interface SectionContext {
  values: TokenValues;
  images: ReadonlyMap<string, ShownImage>;
  fileSrc(fileId: string, variant?: FileVariant): string;
  /** The header action's button, for a hero; '' when the page has none. */
  headerButton: string;
  /** A cta's action as the document shows it: its button, or its lead form. */
  action(actionId: string): string;
}

/** The `sizes` of each kind of image: the width it takes in the layout's CSS (src/render/style.ts). */
const SIZES = {
  hero: '(min-width: 46rem) 22rem, 100vw',
  side: '(min-width: 46rem) 21rem, 100vw',
  card: '(min-width: 46rem) 13rem, 100vw',
  logo: '9rem',
  person: '4rem',
} as const;

/**
 * An `<img>` of a tenant's image: its size (so the box is known before it loads), alt text, and a
 * srcset of the files made with sharp (the 320 px preview, the asset's variants) and the original.
 * `first`: the hero, fetched first; every other image loads lazily. Undefined: the asset is gone.
 */
export function picture(
  context: SectionContext,
  assetId: string | undefined,
  alt: string,
  sizes: keyof typeof SIZES,
  first = false,
): string | undefined {
  const image = assetId === undefined ? undefined : context.images.get(assetId);
  if (!image) return undefined;
  const src = context.fileSrc(image.fileId);
  const candidates = new Map<number, string>();
  for (const v of image.variants) {
    // A variant of another shape would distort in the original's box.
    if (Math.abs(v.width / v.height - image.width / image.height) < 0.02) candidates.set(v.width, context.fileSrc(v.fileId));
  }
  if (image.hasPreview && image.width > 320) candidates.set(320, context.fileSrc(image.fileId, 'preview'));
  candidates.set(image.width, src);
  const srcset = [...candidates.entries()]
    .sort(([a], [b]) => a - b)
    .map(([w, s]) => `${attr(s)} ${w}w`)
    .join(', ');
  const loading = first ? ' fetchpriority="high"' : ' loading="lazy"';
  return `<img src="${attr(src)}" srcset="${srcset}" sizes="${SIZES[sizes]}" width="${image.width}" height="${image.height}" alt="${attr(
    fillTokens(alt, context.values),
  )}"${loading} decoding="async">`;
}

const fill = (context: SectionContext, value: string) => text(fillTokens(value, context.values));
const heading = (context: SectionContext, s: Section, tag = 'h2') => {
  const h = fillTokens(s.heading, context.values);
  return h ? `<${tag}>${text(h)}</${tag}>` : '';
};
const markdown = (context: SectionContext, body: string | undefined) => (body ? renderMarkdown(body, context.values) : '');

function items(list: SectionItem[] | undefined, each: (item: SectionItem) => string): string {
  return (list ?? []).map(each).join('');
}

/** Each layout's markup; every stored text is escaped for where it goes, and filled with tokens first. */
const LAYOUTS: Record<ReturnType<typeof layoutOf>, (context: SectionContext, s: Section, first: boolean) => string> = {
  text: (c, s) => `<section class="s">${heading(c, s)}${markdown(c, s.body)}</section>`,
  hero: (c, s, first) => {
    const img = picture(c, s.imageAssetId, s.imageAlt ?? '', 'hero', first) ?? '';
    return `<section class="s l-hero${img ? '' : ' no-img'}"><div class="l-text">${heading(c, s)}${markdown(c, s.body)}${
      c.headerButton
    }</div>${img ? `<div class="l-img">${img}</div>` : ''}</section>`;
  },
  image_text: (c, s) => {
    const img = picture(c, s.imageAssetId, s.imageAlt ?? '', 'side') ?? '';
    const side = s.imageSide === 'right' ? 'right' : 'left';
    return `<section class="s l-side img-${side}${img ? '' : ' no-img'}">${img ? `<div class="l-img">${img}</div>` : ''}<div class="l-text">${heading(
      c,
      s,
    )}${markdown(c, s.body)}</div></section>`;
  },
  features: (c, s) =>
    `<section class="s">${heading(c, s)}${markdown(c, s.body)}<ul class="cards">${items(s.items, (item) => {
      const img = picture(c, item.imageAssetId, '', 'card') ?? '';
      return `<li class="card">${img}<h3>${fill(c, item.title)}</h3>${markdown(c, item.body)}</li>`;
    })}</ul></section>`,
  faq: (c, s) =>
    `<section class="s">${heading(c, s)}${markdown(c, s.body)}<div class="faq">${items(
      s.items,
      (item) => `<details><summary>${fill(c, item.title)}</summary>${markdown(c, item.body)}</details>`,
    )}</div></section>`,
  quote: (c, s) => {
    const img = picture(c, s.imageAssetId, '', 'person') ?? '';
    const role = fillTokens(s.role ?? '', c.values);
    return `<section class="s">${heading(c, s)}<figure class="quote"><blockquote>${markdown(c, s.body)}</blockquote><figcaption>${img}<span><strong>${fill(
      c,
      s.author ?? '',
    )}</strong>${role ? `<br>${text(role)}` : ''}</span></figcaption></figure></section>`;
  },
  logos: (c, s) =>
    `<section class="s">${heading(c, s)}${markdown(c, s.body)}<ul class="strip">${items(s.items, (item) => {
      const img = picture(c, item.imageAssetId, item.title, 'logo');
      return `<li>${img ?? `<span>${fill(c, item.title)}</span>`}</li>`;
    })}</ul></section>`,
  cta: (c, s) =>
    `<section class="s l-cta">${heading(c, s)}${markdown(c, s.body)}${s.actionId === undefined ? '' : c.action(s.actionId)}</section>`,
  video: (c, s) => {
    const video = s.videoUrl === undefined ? undefined : videoOf(s.videoUrl);
    const title = fillTokens(s.heading, c.values) || 'Video';
    // A link to the player until the click: nothing is fetched from the player's host before it.
    const poster = video
      ? `<div class="video"><a class="play" href="${attr(video.embedUrl)}" data-embed="${attr(video.embedUrl)}" data-title="${attr(
          title,
        )}" target="_blank" rel="noopener"><span class="tri" aria-hidden="true"></span><span>Play video: ${text(title)}</span></a></div>`
      : '';
    return `<section class="s">${heading(c, s)}${markdown(c, s.body)}${poster}</section>`;
  },
};

export function renderSections(context: SectionContext, content: Content): string {
  return content.sections.map((s, i) => LAYOUTS[layoutOf(s)](context, s, i === 0)).join('');
}

/** The player's frame origins the sections embed on a click; empty: the document frames none. */
export function frameOrigins(content: Content): string[] {
  const origins = content.sections.flatMap((s) => {
    const video = layoutOf(s) === 'video' && s.videoUrl !== undefined ? videoOf(s.videoUrl) : undefined;
    return video ? [video.frameOrigin] : [];
  });
  return [...new Set(origins)];
}

/** The image asset ids the sections show, to load them in one go. */
export function sectionImageIds(content: Content): string[] {
  return content.sections.flatMap((s) => [
    ...(s.imageAssetId === undefined ? [] : [s.imageAssetId]),
    ...(s.items ?? []).flatMap((item) => (item.imageAssetId === undefined ? [] : [item.imageAssetId])),
  ]);
}

/**
 * The click that swaps a poster for the player (privacy-enhanced host). Inline and only in a
 * document with a video; without JavaScript the poster stays a link to the player.
 */
export const VIDEO_SCRIPT =
  "document.addEventListener('click',function(e){var a=e.target.closest&&e.target.closest('a[data-embed]');if(!a)return;e.preventDefault();var f=document.createElement('iframe');f.src=a.getAttribute('data-embed');f.title=a.getAttribute('data-title');f.allow='autoplay; encrypted-media; picture-in-picture; fullscreen';f.allowFullscreen=true;f.referrerPolicy='strict-origin-when-cross-origin';a.parentNode.replaceChild(f,a);f.focus()})";

export type { PageAction };
