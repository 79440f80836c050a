import { hasItems, ITEM_FIELDS, LAYOUTS, type Section, type SectionItem, layoutOf, type Content } from '../pages/index.js';

/** The texts of an item the model writes; an item's image, action and highlight stay the page's. */
const ITEM_TEXTS = ['title', 'body', 'value', 'author', 'role', 'price', 'period'] as const;
type ItemText = (typeof ITEM_TEXTS)[number];

/**
 * The answer's JSON schema for a model's structured output. Strict mode wants every property
 * required and no bounds (the prompt states them), so each section carries every text field of
 * every layout, "" or [] where its layout has none. The model writes texts only: images, the cta's
 * action and the video come from the page's section of the same layout at the same place.
 */
export const ANSWER_JSON_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['headline', 'subheadline', 'sections'],
  properties: {
    headline: { type: 'string' },
    subheadline: { type: 'string' },
    sections: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['layout', 'heading', 'body', 'imageAlt', 'author', 'role', 'items'],
        properties: {
          layout: { type: 'string', enum: [...LAYOUTS] },
          heading: { type: 'string' },
          body: { type: 'string' },
          imageAlt: { type: 'string' },
          author: { type: 'string' },
          role: { type: 'string' },
          items: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: [...ITEM_TEXTS],
              properties: Object.fromEntries(ITEM_TEXTS.map((k) => [k, { type: 'string' }])) as Record<ItemText, { type: 'string' }>,
            },
          },
        },
      },
    },
  },
} as const;

interface AnswerSection {
  layout?: unknown;
  heading?: unknown;
  body?: unknown;
  imageAlt?: unknown;
  author?: unknown;
  role?: unknown;
  items?: unknown;
}

const str = (value: unknown) => (typeof value === 'string' ? value : '');

/**
 * The model's answer as content: each section keeps the page's section at the same place when the
 * layouts match (its images, action, video and item images, with the answer's texts); a section
 * the page has no match for becomes a text section. Anything not shaped as expected is passed
 * through for the worker's check to refuse.
 */
export function contentOfAnswer(answer: unknown, page: Content): unknown {
  if (typeof answer !== 'object' || answer === null || !Array.isArray((answer as { sections?: unknown }).sections)) return answer;
  const { headline, subheadline, sections } = answer as { headline?: unknown; subheadline?: unknown; sections: AnswerSection[] };
  return {
    headline,
    subheadline,
    sections: sections.map((s, i) => merged(typeof s === 'object' && s !== null ? s : {}, page.sections[i])),
  };
}

function merged(answer: AnswerSection, original: Section | undefined): Section {
  const text: Section = { heading: str(answer.heading), body: str(answer.body) };
  if (!original || original.layout === undefined || answer.layout !== original.layout) return text;
  const layout = layoutOf(original);
  const out: Section = { ...original, ...text };
  if (original.imageAlt !== undefined) out.imageAlt = str(answer.imageAlt);
  if (original.author !== undefined) out.author = str(answer.author);
  if (original.role !== undefined) out.role = str(answer.role);
  if (original.items && hasItems(layout)) {
    const written = Array.isArray(answer.items) ? (answer.items as Partial<Record<ItemText, unknown>>[]) : [];
    const fields = (ITEM_FIELDS[layout] as readonly string[]).map((f) => f.replace('?', ''));
    // As many items as the page's: their images stay with them, and the counts stay within the layout's bounds.
    // A text the layout takes is the answer's; one the model left out keeps the page's.
    out.items = original.items.map((item, j) => {
      const w = written[j];
      const next: SectionItem = { ...item };
      for (const key of ITEM_TEXTS) {
        const value = w?.[key];
        if (fields.includes(key) && typeof value === 'string' && (value !== '' || item[key] !== undefined)) next[key] = value;
      }
      return next;
    });
  }
  return out;
}
