import { ITEM_FIELDS, LAYOUTS, type Section } from '../pages/section-schema.js';
import { layoutOf } from '../pages/sections.js';
import type { Content } from '../pages/schemas.js';

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
              required: ['title', 'body'],
              properties: { title: { type: 'string' }, body: { type: 'string' } },
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
  if (original.items && (layout === 'features' || layout === 'faq' || layout === 'logos')) {
    const written = Array.isArray(answer.items) ? (answer.items as { title?: unknown; body?: unknown }[]) : [];
    const hasBody = (ITEM_FIELDS[layout] as readonly string[]).includes('body');
    // As many items as the page's: their images stay with them, and the counts stay within the layout's bounds.
    out.items = original.items.map((item, j) => {
      const w = written[j];
      const title = w ? str(w.title) : item.title;
      return hasBody ? { ...item, title, body: w ? str(w.body) : (item.body ?? '') } : { ...item, title };
    });
  }
  return out;
}
