import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../http/schemas.js';

/** The layouts a section may take; `text` (the default) is a heading and a Markdown body, as before layouts. */
export const LAYOUTS = ['text', 'hero', 'image_text', 'features', 'faq', 'quote', 'logos', 'cta', 'video'] as const;
export type Layout = (typeof LAYOUTS)[number];

/** How many items each layout with items takes (the schema allows the widest range; src/pages/sections.ts the layout's). */
export const ITEM_BOUNDS = { features: [2, 12], faq: [1, 30], logos: [2, 24] } as const satisfies Partial<
  Record<Layout, readonly [number, number]>
>;

/**
 * The fields each layout takes besides heading and body; `?` marks an optional one. A field of
 * another layout is 400 at its pointer: a section says only what it shows.
 */
export const LAYOUT_FIELDS: Record<Layout, readonly string[]> = {
  text: [],
  hero: ['imageAssetId', 'imageAlt'],
  image_text: ['imageAssetId', 'imageAlt', 'imageSide?'],
  features: ['items'],
  faq: ['items'],
  quote: ['author', 'role', 'imageAssetId?'],
  logos: ['items'],
  cta: ['actionId'],
  video: ['videoUrl'],
};

/** The fields an item takes in each layout with items. */
export const ITEM_FIELDS = {
  features: ['title', 'body', 'imageAssetId?'],
  faq: ['title', 'body'],
  logos: ['title', 'imageAssetId'],
} as const;

const AssetId = (what: string) =>
  Type.String({ minLength: 1, maxLength: 64, description: `${what}: a live image asset of the tenant (400 at this field otherwise)` });
const closed = { additionalProperties: false } as const;

export const SectionItem = Type.Object(
  {
    title: Type.String({
      maxLength: 200,
      description: "features: the card's title; faq: the question; logos: the logo's alt text (the company's name). Takes tokens",
    }),
    body: Type.Optional(
      Type.String({ maxLength: 5000, description: "features: the card's text; faq: the answer (Markdown, takes tokens). Not in logos" }),
    ),
    imageAssetId: Type.Optional(AssetId("features: the card's image (optional); logos: the logo (required). Not in faq")),
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
          'Extension; absent: text. hero: imageAssetId, imageAlt. image_text: imageAssetId, imageAlt, imageSide. features: items (2–12 of title, body, imageAssetId?). faq: items (1–30 of title, body). quote: author, role, imageAssetId?. logos: items (2–24 of title, imageAssetId). cta: actionId. video: videoUrl. A field of another layout is 400',
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
    items: Type.Optional(Type.Array(SectionItem, { minItems: 1, maxItems: 30, description: 'features: 2–12; faq: 1–30; logos: 2–24' })),
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
