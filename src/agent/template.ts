import type { Content } from '../pages/index.js';
import type { Generator, GeneratorInput } from './types.js';

const MAX_SECTIONS = 50;
const MAX_BODY = 20_000;

/**
 * The page's content, with the version's supplementaryContext (when it has one) added as a last
 * section (under a segment's rules in words, for a segment audience). Personalisation tokens stay as written: they are filled when the page is served.
 * Deterministic, no network. A page that already has the most sections gets the context appended
 * to its last one instead.
 */
export function templateContent(input: GeneratorInput): Content {
  const { content } = input.page;
  const context = input.version.supplementaryContext?.trim();
  if (!context) return content;
  // A segment's context is said for its visitors: its rules in words head the added section.
  const heading = input.audience.segment ? `${input.audience.segment}`.slice(0, 200) : '';
  const sections = [...content.sections];
  const last = sections[sections.length - 1];
  if (sections.length >= MAX_SECTIONS && last) {
    sections[sections.length - 1] = { ...last, body: `${last.body}\n\n${context}`.slice(0, MAX_BODY) };
  } else {
    sections.push({ heading, body: context.slice(0, MAX_BODY) });
  }
  return { ...content, sections };
}

export const templateGenerator: Generator = {
  name: 'template',
  inProcess: true,
  readsHistory: false,
  generate: async (input) => templateContent(input),
};
