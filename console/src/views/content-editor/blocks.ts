import type { PageContent } from '../../api.js';

// The block editor's model: a page's content as the editor holds it (each section with a key of
// its own, so a moved section keeps its fields and focus) and as the API takes it (only the fields
// its layout uses, so switching a section from "Features" to "Text" sends no stray items).

export const LAYOUTS = [
  ['text', 'Text'],
  ['hero', 'Hero: first screen with an image'],
  ['image_text', 'Image and text'],
  ['features', 'Features: a grid of cards'],
  ['faq', 'Questions and answers'],
  ['quote', 'Quote from a person'],
  ['logos', 'Logos'],
  ['cta', 'Call to action: a big button'],
  ['video', 'Video'],
  ['stats', 'Numbers: a few big figures'],
  ['steps', 'Steps: how it works, numbered'],
  ['testimonials', 'Customer quotes: several side by side'],
  ['pricing', 'Prices: plans side by side'],
] as const;
export type Layout = (typeof LAYOUTS)[number][0];
export const layoutName = (layout: Layout): string => LAYOUTS.find(([l]) => l === layout)?.[1] ?? layout;

export interface Item {
  key: number;
  title: string;
  body: string;
  imageAssetId: string;
  value: string;
  author: string;
  role: string;
  price: string;
  period: string;
  actionId: string;
  highlighted: boolean;
}

export const VARIANTS = [
  ['split', 'Text beside the image'],
  ['background', 'Text over the image, edge to edge'],
  ['centered', 'Text centred, the image below'],
] as const;
export type Variant = (typeof VARIANTS)[number][0];
export const BACKGROUNDS = [
  ['plain', 'Plain: the page background'],
  ['muted', 'Light grey band'],
  ['brand', 'Brand colour band'],
  ['dark', 'Dark band'],
] as const;
export type Background = (typeof BACKGROUNDS)[number][0];

export interface Block {
  key: number;
  layout: Layout;
  heading: string;
  body: string;
  imageAssetId: string;
  imageAlt: string;
  imageSide: 'left' | 'right';
  variant: Variant;
  background: Background;
  items: Item[];
  author: string;
  role: string;
  actionId: string;
  videoUrl: string;
}

/**
 * What each layout's items are called, and the labels of the texts an item has (a text without a
 * label is not sent), whether it has an image, a button and a highlight (the issues' tables).
 */
export interface ItemKind {
  one: string;
  title?: string;
  body?: string;
  value?: string;
  author?: string;
  role?: string;
  price?: string;
  period?: string;
  image: boolean;
  action?: boolean;
}
export const ITEMS: Partial<Record<Layout, ItemKind>> = {
  features: { one: 'Card', title: 'Card title', body: 'Card text', image: true },
  faq: { one: 'Question', title: 'Question', body: 'Answer', image: false },
  logos: { one: 'Logo', title: 'Company name (alt text)', image: true },
  stats: { one: 'Figure', value: 'Figure (like 3× or 40%)', title: 'What it counts', image: false },
  steps: { one: 'Step', title: 'Step title', body: 'Step text', image: false },
  testimonials: { one: 'Quote', body: 'What they said', author: 'Who said it', role: 'Their role (optional)', image: true },
  pricing: {
    one: 'Plan',
    title: 'Plan name',
    price: 'Price (like $12 or Free)',
    period: 'Per (optional, like per month)',
    body: 'What the plan includes',
    image: false,
    action: true,
  },
};
/** The texts an item may have, in the order the editor shows them. */
export const ITEM_TEXTS = ['value', 'title', 'price', 'period', 'body', 'author', 'role'] as const;
/** Texts an item may leave empty: not sent when empty. */
const OPTIONAL_TEXTS: readonly string[] = ['role', 'period'];
/** Layouts whose section has an image of its own. */
export const HAS_IMAGE: readonly Layout[] = ['hero', 'image_text', 'quote'];

let nextKey = 1;
export const newKey = (): number => nextKey++;

export const emptyItem = (): Item => ({
  key: newKey(),
  title: '',
  body: '',
  imageAssetId: '',
  value: '',
  author: '',
  role: '',
  price: '',
  period: '',
  actionId: '',
  highlighted: false,
});

export const emptyBlock = (layout: Layout = 'text'): Block => ({
  key: newKey(),
  layout,
  heading: '',
  body: '',
  imageAssetId: '',
  imageAlt: '',
  imageSide: 'left',
  variant: 'split',
  background: 'plain',
  items: [],
  author: '',
  role: '',
  actionId: '',
  videoUrl: '',
});

/** A section as the API has it: the generated type, with the layout fields (optional, as the reference's extension says). */
export type ApiSection = PageContent['sections'][number] & {
  layout?: Layout;
  imageAssetId?: string;
  imageAlt?: string;
  imageSide?: 'left' | 'right';
  variant?: Variant;
  background?: Background;
  items?: ApiItem[];
  author?: string;
  role?: string;
  actionId?: string;
  videoUrl?: string;
};

export interface ApiItem {
  title?: string;
  body?: string;
  imageAssetId?: string;
  value?: string;
  author?: string;
  role?: string;
  price?: string;
  period?: string;
  actionId?: string;
  highlighted?: boolean;
}

export interface Draft {
  headline: string;
  subheadline: string;
  blocks: Block[];
}

/** One section as the editor holds it (issue 48's `section` change edits one alone). */
export const fromSection = (s: ApiSection): Block => ({
  ...emptyBlock(s.layout ?? 'text'),
  heading: s.heading,
  body: s.body,
  imageAssetId: s.imageAssetId ?? '',
  imageAlt: s.imageAlt ?? '',
  imageSide: s.imageSide ?? 'left',
  variant: s.variant ?? 'split',
  background: s.background ?? 'plain',
  items: (s.items ?? []).map((i) => ({
    ...emptyItem(),
    ...Object.fromEntries(ITEM_TEXTS.map((k) => [k, i[k] ?? ''])),
    imageAssetId: i.imageAssetId ?? '',
    actionId: i.actionId ?? '',
    highlighted: i.highlighted === true,
  })),
  author: s.author ?? '',
  role: s.role ?? '',
  actionId: s.actionId ?? '',
  videoUrl: s.videoUrl ?? '',
});

export function fromContent(content: PageContent | null | undefined): Draft {
  const sections = (content?.sections ?? []) as ApiSection[];
  return {
    headline: content?.headline ?? '',
    subheadline: content?.subheadline ?? '',
    blocks: sections.map(fromSection),
  };
}

const given = <K extends string>(key: K, value: string): Partial<Record<K, string>> =>
  value === '' ? {} : ({ [key]: value } as Record<K, string>);

export function toSection(b: Block): ApiSection {
  const section: ApiSection = { heading: b.heading, body: b.body };
  // Plain is the default band: left out, so a section without one is sent as it always was.
  if (b.background !== 'plain') section.background = b.background;
  // A text section is sent as it always was: a service without layouts takes it unchanged.
  if (b.layout === 'text') return section;
  section.layout = b.layout;
  if (HAS_IMAGE.includes(b.layout)) Object.assign(section, given('imageAssetId', b.imageAssetId));
  // Alt text and a quote's role are required but may be empty (a decorative image, no role): always sent.
  if (b.layout === 'hero' || b.layout === 'image_text') section.imageAlt = b.imageAlt;
  if (b.layout === 'image_text') section.imageSide = b.imageSide;
  if (b.layout === 'hero' && b.variant !== 'split') section.variant = b.variant;
  const items = ITEMS[b.layout];
  if (items)
    section.items = b.items.map((i) => {
      const item: ApiItem = {};
      for (const key of ITEM_TEXTS) {
        if (items[key] !== undefined && !(OPTIONAL_TEXTS.includes(key) && i[key] === '')) item[key] = i[key];
      }
      if (items.image) Object.assign(item, given('imageAssetId', i.imageAssetId));
      if (items.action) Object.assign(item, given('actionId', i.actionId));
      if (items.action && i.highlighted) item.highlighted = true;
      return item;
    });
  if (b.layout === 'quote') Object.assign(section, { author: b.author, role: b.role });
  if (b.layout === 'cta') Object.assign(section, given('actionId', b.actionId));
  if (b.layout === 'video') Object.assign(section, given('videoUrl', b.videoUrl));
  return section;
}

/** The content the API takes: the pointers of its problems (`/content/sections/2/items/0/title`) are the editor's order. */
export const toContent = (draft: Draft): PageContent => ({
  headline: draft.headline,
  subheadline: draft.subheadline,
  sections: draft.blocks.map(toSection) as PageContent['sections'],
});

/** `list` with the element at `from` moved to `to` (both in range). */
export function moved<T>(list: readonly T[], from: number, to: number): T[] {
  const next = [...list];
  const [taken] = next.splice(from, 1);
  if (taken !== undefined) next.splice(to, 0, taken);
  return next;
}
