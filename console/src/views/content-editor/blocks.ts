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
] as const;
export type Layout = (typeof LAYOUTS)[number][0];
export const layoutName = (layout: Layout): string => LAYOUTS.find(([l]) => l === layout)?.[1] ?? layout;

export interface Item {
  key: number;
  title: string;
  body: string;
  imageAssetId: string;
}

export interface Block {
  key: number;
  layout: Layout;
  heading: string;
  body: string;
  imageAssetId: string;
  imageAlt: string;
  imageSide: 'left' | 'right';
  items: Item[];
  author: string;
  role: string;
  actionId: string;
  videoUrl: string;
}

/** What each layout's items are called, and whether an item has text and an image (the table). */
export const ITEMS: Partial<Record<Layout, { one: string; title: string; body?: string; image: boolean }>> = {
  features: { one: 'Card', title: 'Card title', body: 'Card text', image: true },
  faq: { one: 'Question', title: 'Question', body: 'Answer', image: false },
  logos: { one: 'Logo', title: 'Company name (alt text)', image: true },
};
/** Layouts whose section has an image of its own. */
export const HAS_IMAGE: readonly Layout[] = ['hero', 'image_text', 'quote'];

let nextKey = 1;
export const newKey = (): number => nextKey++;

export const emptyItem = (): Item => ({ key: newKey(), title: '', body: '', imageAssetId: '' });

export const emptyBlock = (layout: Layout = 'text'): Block => ({
  key: newKey(),
  layout,
  heading: '',
  body: '',
  imageAssetId: '',
  imageAlt: '',
  imageSide: 'left',
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
  items?: { title: string; body?: string; imageAssetId?: string }[];
  author?: string;
  role?: string;
  actionId?: string;
  videoUrl?: string;
};

export interface Draft {
  headline: string;
  subheadline: string;
  blocks: Block[];
}

export function fromContent(content: PageContent | null | undefined): Draft {
  const sections = (content?.sections ?? []) as ApiSection[];
  return {
    headline: content?.headline ?? '',
    subheadline: content?.subheadline ?? '',
    blocks: sections.map((s) => ({
      ...emptyBlock(s.layout ?? 'text'),
      heading: s.heading,
      body: s.body,
      imageAssetId: s.imageAssetId ?? '',
      imageAlt: s.imageAlt ?? '',
      imageSide: s.imageSide ?? 'left',
      items: (s.items ?? []).map((i) => ({ key: newKey(), title: i.title, body: i.body ?? '', imageAssetId: i.imageAssetId ?? '' })),
      author: s.author ?? '',
      role: s.role ?? '',
      actionId: s.actionId ?? '',
      videoUrl: s.videoUrl ?? '',
    })),
  };
}

const given = <K extends string>(key: K, value: string): Partial<Record<K, string>> =>
  value === '' ? {} : ({ [key]: value } as Record<K, string>);

function toSection(b: Block): ApiSection {
  const section: ApiSection = { heading: b.heading, body: b.body };
  // A text section is sent as it always was: a service without layouts takes it unchanged.
  if (b.layout === 'text') return section;
  section.layout = b.layout;
  if (HAS_IMAGE.includes(b.layout)) Object.assign(section, given('imageAssetId', b.imageAssetId));
  // Alt text and a quote's role are required but may be empty (a decorative image, no role): always sent.
  if (b.layout === 'hero' || b.layout === 'image_text') section.imageAlt = b.imageAlt;
  if (b.layout === 'image_text') section.imageSide = b.imageSide;
  const items = ITEMS[b.layout];
  if (items)
    section.items = b.items.map((i) => ({
      title: i.title,
      ...(items.body ? { body: i.body } : {}),
      ...(items.image ? given('imageAssetId', i.imageAssetId) : {}),
    }));
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
