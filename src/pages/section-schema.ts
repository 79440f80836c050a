import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../http/schemas.js';

/** The layouts a section may take; `text` (the default) is a heading and a Markdown body, as before layouts. */
export const LAYOUTS = [
  'text',
  'hero',
  'image_text',
  'features',
  'faq',
  'quote',
  'logos',
  'cta',
  'video',
  'stats',
  'steps',
  'testimonials',
  'pricing',
] as const;
export type Layout = (typeof LAYOUTS)[number];

/** How many items each layout with items takes (the schema allows the widest range; src/pages/sections.ts the layout's). */
export const ITEM_BOUNDS = {
  features: [2, 12],
  faq: [1, 30],
  logos: [2, 24],
  stats: [2, 6],
  steps: [2, 8],
  testimonials: [2, 9],
  pricing: [1, 4],
} as const satisfies Partial<Record<Layout, readonly [number, number]>>;

/**
 * The fields each layout takes besides heading and body; `?` marks an optional one. A field of
 * another layout is 400 at its pointer: a section says only what it shows.
 */
export const LAYOUT_FIELDS: Record<Layout, readonly string[]> = {
  text: [],
  hero: ['imageAssetId', 'imageAlt', 'variant?'],
  image_text: ['imageAssetId', 'imageAlt', 'imageSide?'],
  features: ['items'],
  faq: ['items'],
  quote: ['author', 'role', 'imageAssetId?'],
  logos: ['items'],
  cta: ['actionId'],
  video: ['videoUrl'],
  stats: ['items'],
  steps: ['items'],
  testimonials: ['items'],
  pricing: ['items'],
};

/** The layouts whose section is a list of items. */
export const ITEM_LAYOUTS = ['features', 'faq', 'logos', 'stats', 'steps', 'testimonials', 'pricing'] as const;
export type ItemLayout = (typeof ITEM_LAYOUTS)[number];
export const hasItems = (layout: Layout): layout is ItemLayout => (ITEM_LAYOUTS as readonly string[]).includes(layout);

/** The fields an item takes in each layout with items. */
export const ITEM_FIELDS = {
  features: ['title', 'body', 'imageAssetId?'],
  faq: ['title', 'body'],
  logos: ['title', 'imageAssetId'],
  stats: ['value', 'title'],
  steps: ['title', 'body'],
  testimonials: ['body', 'author', 'role?', 'imageAssetId?'],
  pricing: ['title', 'price', 'period?', 'body', 'actionId?', 'highlighted?'],
} as const satisfies Record<ItemLayout, readonly string[]>;

/** Every field an item may carry, in any layout. */
export const ITEM_KEYS = [
  'title',
  'body',
  'imageAssetId',
  'value',
  'author',
  'role',
  'price',
  'period',
  'actionId',
  'highlighted',
] as const;

/** A hero's arrangement: text beside the image, text over it edge to edge, or text centred above it. */
export const HERO_VARIANTS = ['split', 'background', 'centered'] as const;
/** A section's band: the page's own background, a muted grey, the brand colour or dark. */
export const BACKGROUNDS = ['plain', 'muted', 'brand', 'dark'] as const;

const AssetId = (what: string) =>
  Type.String({ minLength: 1, maxLength: 64, description: `${what}: a live image asset of the tenant (400 at this field otherwise)` });
const closed = { additionalProperties: false } as const;

export const SectionItem = Type.Object(
  {
    title: Type.Optional(
      Type.String({
        maxLength: 200,
        description:
          "features: the card's title; faq: the question; logos: the logo's alt text (the company's name); stats: what the number counts; steps: the step; pricing: the plan's name. Required in each of those; not in testimonials. Takes tokens",
      }),
    ),
    body: Type.Optional(
      Type.String({
        maxLength: 5000,
        description:
          "features: the card's text; faq: the answer; steps: the step's text; testimonials: the quote; pricing: the plan's features (Markdown, takes tokens). Required in each of those; not in logos or stats",
      }),
    ),
    imageAssetId: Type.Optional(
      AssetId("features: the card's image (optional); logos: the logo (required); testimonials: the person (optional). Not elsewhere"),
    ),
    value: Type.Optional(Type.String({ maxLength: 20, description: 'stats (required): the figure, like "3×" or "40%". Takes tokens' })),
    author: Type.Optional(Type.String({ maxLength: 200, description: 'testimonials (required): who said it. Takes tokens' })),
    role: Type.Optional(Type.String({ maxLength: 200, description: 'testimonials (optional): their role and company. Takes tokens' })),
    price: Type.Optional(
      Type.String({ maxLength: 20, description: 'pricing (required): the price as shown, like "$49" or "Free". Takes tokens' }),
    ),
    period: Type.Optional(
      Type.String({ maxLength: 40, description: 'pricing (optional): what the price is for, like "per month". Takes tokens' }),
    ),
    actionId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: "pricing (optional): one of the page's actions, shown as the plan's button",
      }),
    ),
    highlighted: Type.Optional(
      Type.Boolean({ description: 'pricing (optional): the plan shown as the one to choose; at most one per section' }),
    ),
  },
  closed,
);
export type SectionItem = Static<typeof SectionItem>;

/** A section: a heading and a Markdown body, and (extension) a layout with the fields it takes. */
export const Section = Type.Object(
  {
    heading: Type.String({ maxLength: 200 }),
    body: Type.String({ maxLength: 20_000, description: 'Markdown' }),
    layout: Type.Optional(
      StringEnum(LAYOUTS, {
        description:
          'Extension; absent: text. hero: imageAssetId, imageAlt, variant?. image_text: imageAssetId, imageAlt, imageSide. features: items (2–12 of title, body, imageAssetId?). faq: items (1–30 of title, body). quote: author, role, imageAssetId?. logos: items (2–24 of title, imageAssetId). cta: actionId. video: videoUrl. stats: items (2–6 of value, title). steps: items (2–8 of title, body). testimonials: items (2–9 of body, author, role?, imageAssetId?). pricing: items (1–4 of title, price, period?, body, actionId?, highlighted?). A field of another layout is 400',
      }),
    ),
    background: Type.Optional(
      StringEnum(BACKGROUNDS, {
        description:
          "Any layout: the section's band. plain (absent): the page's background; muted: a light grey; brand: the brand colour, its text chosen for contrast; dark",
      }),
    ),
    variant: Type.Optional(
      StringEnum(HERO_VARIANTS, {
        description:
          "hero: split (absent): text beside the image; background: the image edge to edge behind the text, under an overlay that keeps it readable; centered: centred text, the image below. A first-section hero with an empty heading shows the page's headline and subheadline",
      }),
    ),
    imageAssetId: Type.Optional(AssetId('hero, image_text: the image (required); quote: the person (optional)')),
    imageAlt: Type.Optional(
      Type.String({
        maxLength: 300,
        description: 'hero, image_text (required): the image\'s alt text; "" for a decorative image. Takes tokens',
      }),
    ),
    imageSide: Type.Optional(
      StringEnum(['left', 'right'] as const, { description: 'image_text: where the image is on wide screens; absent: left' }),
    ),
    items: Type.Optional(
      Type.Array(SectionItem, {
        minItems: 1,
        maxItems: 30,
        description: 'features: 2–12; faq: 1–30; logos: 2–24; stats: 2–6; steps: 2–8; testimonials: 2–9; pricing: 1–4',
      }),
    ),
    author: Type.Optional(Type.String({ maxLength: 200, description: 'quote (required): who said it. Takes tokens' })),
    role: Type.Optional(Type.String({ maxLength: 200, description: 'quote (required): their role and company; may be "". Takes tokens' })),
    actionId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: "cta (required): one of the page's actions; a form action shows its lead form",
      }),
    ),
    videoUrl: Type.Optional(
      Type.String({
        maxLength: 2048,
        description:
          'video (required): an https YouTube (youtube.com/watch?v=, youtu.be/, youtube.com/shorts/ or /embed/) or Vimeo (vimeo.com/<id>) URL. The player loads from youtube-nocookie.com or player.vimeo.com (dnt=1) only after a click',
      }),
    ),
  },
  closed,
);
export type Section = Static<typeof Section>;
