import type { Static } from '@sinclair/typebox';
import type { FileVariant, ShownImage } from '../assets/index.js';
import { type Section, type SectionItem, layoutOf, videoOf, type Action, type Content } from '../pages/index.js';
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
  /** The page's headline (its one h1) and subheadline, for a first hero that carries them (heroCarriesHeadline). */
  headline: string;
  /** A cta's action as the document shows it: its button, or its lead form. */
  action(actionId: string): string;
  /** An action as a button only (a form's button goes to its form, shown elsewhere): a pricing plan's. */
  button(actionId: string): string;
}

/**
 * The `sizes` of each kind of image: the width it takes in the layout's CSS (src/render/style.ts),
 * so the browser picks the smallest file that stays sharp. `cover`: a background hero that fills the window.
 */
const SIZES = {
  cover: '100vw',
  wide: '(min-width: 75rem) 72rem, 100vw',
  hero: '(min-width: 75rem) 36rem, (min-width: 46rem) 50vw, 100vw',
  side: '(min-width: 75rem) 36rem, (min-width: 46rem) 50vw, 100vw',
  card: '(min-width: 75rem) 24rem, (min-width: 64rem) 33vw, (min-width: 40rem) 50vw, 100vw',
  logo: '9rem',
  person: '4rem',
} as const;

/**
 * An image of the tenant: its size (so the box is known before it loads), alt text, and every
 * width sharp made of it (issue 46 §5), in WebP for the browsers that take it (a `<source>`) and
 * in the original's format, up to the original. Until the backfill has made them, the 320 px
 * preview and the asset's variants (children of its shape) stand in. `first`: the page's leading
 * hero, fetched first; every other image loads lazily. Undefined: the asset is gone.
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
  const own = new Map<number, string>();
  const made = image.renditions;
  for (const w of made?.widths ?? []) own.set(w, context.fileSrc(image.fileId, `w${w}`));
  for (const v of image.variants) {
    // A variant of another shape would distort in the original's box.
    if (Math.abs(v.width / v.height - image.width / image.height) < 0.02) own.set(v.width, context.fileSrc(v.fileId));
  }
  if (!made && image.hasPreview && image.width > 320) own.set(320, context.fileSrc(image.fileId, 'preview'));
  own.set(image.width, src);
  const webp = made?.webp
    ? srcset(
        new Map([
          ...made.widths.map((w) => [w, context.fileSrc(image.fileId, `w${w}.webp`)] as const),
          [image.width, context.fileSrc(image.fileId, 'webp')],
        ]),
      )
    : '';
  const loading = first ? ' fetchpriority="high"' : ' loading="lazy"';
  const img = `<img src="${attr(src)}" srcset="${srcset(own)}" sizes="${SIZES[sizes]}" width="${image.width}" height="${image.height}" alt="${attr(
    fillTokens(alt, context.values),
  )}"${loading} decoding="async">`;
  return webp ? `<picture><source type="image/webp" srcset="${webp}" sizes="${SIZES[sizes]}">${img}</picture>` : img;
}

const srcset = (candidates: Map<number, string>) =>
  [...candidates.entries()]
    .sort(([a], [b]) => a - b)
    .map(([w, s]) => `${attr(s)} ${w}w`)
    .join(', ');

const fill = (context: SectionContext, value: string | undefined) => text(fillTokens(value ?? '', context.values));
const heading = (context: SectionContext, s: Section, tag = 'h2') => {
  const h = fillTokens(s.heading, context.values);
  return h ? `<${tag}>${text(h)}</${tag}>` : '';
};
// The page's headline is its one h1: a Markdown heading of level 1 in a section is shown as an h2.
// (markdown-it escapes any `<` written in the text, so every `<h1>` here is one it made.)
const markdown = (context: SectionContext, body: string | undefined) =>
  body ? renderMarkdown(body, context.values).replace(/<(\/?)h1>/g, '<$1h2>') : '';

function items(list: SectionItem[] | undefined, each: (item: SectionItem) => string): string {
  return (list ?? []).map(each).join('');
}

/**
 * How many columns `n` items take on a wide screen: never one item alone on the last row (4 is
 * 4, 5 is 3 + 2, 7 is 4 + 3). Up to 4 in a row; full rows first, else a last row of two or more.
 */
export function columns(n: number): number {
  if (n <= 4) return Math.max(n, 1);
  return [4, 3].find((c) => n % c === 0) ?? [4, 3].find((c) => n % c >= 2) ?? 2;
}
const grid = (list: SectionItem[] | undefined) => `g${columns(list?.length ?? 0)}`;

/** The section's band class: none for the page's own background. */
const band = (s: Section) => (s.background === undefined || s.background === 'plain' ? '' : ` b-${s.background}`);

/** A first section that is a hero with no heading of its own shows the page's headline and subheadline in it. */
export const heroCarriesHeadline = (content: Content): boolean => {
  const first = content.sections[0];
  return first !== undefined && layoutOf(first) === 'hero' && first.heading.trim() === '';
};

const HERO_SIZES = { split: 'hero', background: 'cover', centered: 'wide' } as const;

/** Each layout's markup; every stored text is escaped for where it goes, and filled with tokens first. */
const LAYOUTS: Record<ReturnType<typeof layoutOf>, (context: SectionContext, s: Section, first: boolean) => string> = {
  text: (c, s) => `<section class="s${band(s)}">${heading(c, s)}${markdown(c, s.body)}</section>`,
  hero: (c, s, first) => {
    const variant = s.variant ?? 'split';
    const img = picture(c, s.imageAssetId, s.imageAlt ?? '', HERO_SIZES[variant], first) ?? '';
    const title = first && s.heading.trim() === '' ? c.headline : heading(c, s);
    return `<section class="s l-hero${variant === 'split' ? '' : ` v-${variant}`}${img ? '' : ' no-img'}${band(s)}"><div class="l-text">${title}${markdown(
      c,
      s.body,
    )}${c.headerButton}</div>${img ? `<div class="l-img">${img}</div>` : ''}</section>`;
  },
  image_text: (c, s) => {
    const img = picture(c, s.imageAssetId, s.imageAlt ?? '', 'side') ?? '';
    const side = s.imageSide === 'right' ? 'right' : 'left';
    return `<section class="s l-side img-${side}${img ? '' : ' no-img'}${band(s)}">${img ? `<div class="l-img">${img}</div>` : ''}<div class="l-text">${heading(
      c,
      s,
    )}${markdown(c, s.body)}</div></section>`;
  },
  features: (c, s) =>
    `<section class="s l-wide${band(s)}">${heading(c, s)}${markdown(c, s.body)}<ul class="cards ${grid(s.items)}">${items(
      s.items,
      (item) => {
        const img = picture(c, item.imageAssetId, '', 'card') ?? '';
        return `<li class="card">${img}<h3>${fill(c, item.title)}</h3>${markdown(c, item.body)}</li>`;
      },
    )}</ul></section>`,
  faq: (c, s) =>
    `<section class="s${band(s)}">${heading(c, s)}${markdown(c, s.body)}<div class="faq">${items(
      s.items,
      (item) => `<details><summary>${fill(c, item.title)}</summary>${markdown(c, item.body)}</details>`,
    )}</div></section>`,
  quote: (c, s) => {
    const img = picture(c, s.imageAssetId, '', 'person') ?? '';
    return `<section class="s${band(s)}">${heading(c, s)}<figure class="quote"><blockquote>${markdown(c, s.body)}</blockquote>${caption(
      c,
      img,
      s.author,
      s.role,
    )}</figure></section>`;
  },
  logos: (c, s) =>
    `<section class="s l-wide${band(s)}">${heading(c, s)}${markdown(c, s.body)}<ul class="strip">${items(s.items, (item) => {
      const img = picture(c, item.imageAssetId, item.title ?? '', 'logo');
      return `<li>${img ?? `<span>${fill(c, item.title)}</span>`}</li>`;
    })}</ul></section>`,
  cta: (c, s) =>
    `<section class="s l-cta${band(s)}">${heading(c, s)}${markdown(c, s.body)}${s.actionId === undefined ? '' : c.action(s.actionId)}</section>`,
  video: (c, s) => {
    const video = s.videoUrl === undefined ? undefined : videoOf(s.videoUrl);
    const title = fillTokens(s.heading, c.values) || 'Video';
    // A link to the player until the click: nothing is fetched from the player's host before it.
    const poster = video
      ? `<div class="video"><a class="play" href="${attr(video.embedUrl)}" data-embed="${attr(video.embedUrl)}" data-title="${attr(
          title,
        )}" target="_blank" rel="noopener"><span class="tri" aria-hidden="true"></span><span>Play video: ${text(title)}</span></a></div>`
      : '';
    return `<section class="s${band(s)}">${heading(c, s)}${markdown(c, s.body)}${poster}</section>`;
  },
  stats: (c, s) =>
    `<section class="s l-wide${band(s)}">${heading(c, s)}${markdown(c, s.body)}<ul class="stats ${grid(s.items)}">${items(
      s.items,
      (item) => `<li><strong>${fill(c, item.value)}</strong><span>${fill(c, item.title)}</span></li>`,
    )}</ul></section>`,
  steps: (c, s) =>
    `<section class="s l-wide${band(s)}">${heading(c, s)}${markdown(c, s.body)}<ol class="steps ${grid(s.items)}">${items(
      s.items,
      (item) => `<li><h3>${fill(c, item.title)}</h3>${markdown(c, item.body)}</li>`,
    )}</ol></section>`,
  testimonials: (c, s) =>
    `<section class="s l-wide${band(s)}">${heading(c, s)}${markdown(c, s.body)}<ul class="cards ${grid(s.items)}">${items(
      s.items,
      (item) => {
        const img = picture(c, item.imageAssetId, '', 'person') ?? '';
        return `<li class="card"><figure class="quote"><blockquote>${markdown(c, item.body)}</blockquote>${caption(
          c,
          img,
          item.author,
          item.role,
        )}</figure></li>`;
      },
    )}</ul></section>`,
  pricing: (c, s) =>
    `<section class="s l-wide${band(s)}">${heading(c, s)}${markdown(c, s.body)}<ul class="plans ${grid(s.items)}">${items(
      s.items,
      (item) => {
        const period = fillTokens(item.period ?? '', c.values);
        const button = item.actionId === undefined ? '' : c.button(item.actionId);
        return `<li class="plan${item.highlighted === true ? ' hi' : ''}"><h3>${fill(c, item.title)}</h3><p class="price"><strong>${fill(
          c,
          item.price,
        )}</strong>${period ? ` <span>${text(period)}</span>` : ''}</p>${markdown(c, item.body)}${button}</li>`;
      },
    )}</ul></section>`,
};

/** Who said a quote: their picture, name and role (the role left out when empty). */
function caption(c: SectionContext, img: string, author: string | undefined, role: string | undefined): string {
  const shownRole = fillTokens(role ?? '', c.values);
  return `<figcaption>${img}<span><strong>${fill(c, author)}</strong>${shownRole ? `<br>${text(shownRole)}` : ''}</span></figcaption>`;
}

/**
 * Each content section carries its index and layout (issue 49): the measuring script reports clicks
 * and reach by them, and the heatmap names them again from the content. The headline is not a section.
 */
export function renderSections(context: SectionContext, content: Content): string {
  return content.sections
    .map((s, i) =>
      LAYOUTS[layoutOf(s)](context, s, i === 0).replace(
        /^<section class="[^"]*"/,
        (open) => `${open} data-pam-section="${i}" data-pam-layout="${layoutOf(s)}"`,
      ),
    )
    .join('');
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
