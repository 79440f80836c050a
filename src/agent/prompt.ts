import type { GeneratorInput } from './types.js';

export interface Prompt {
  system: string;
  user: string;
}

const SYSTEM = `You write the content of one web page for one audience: a person (and their company) a business wants to reach.
Start from the page's content and rewrite it for this audience, keeping its purpose and structure.
Use only facts present in the inputs below (the page, the audience, the person, their account, their recent activity logs and the business's topics). Never invent names, numbers, quotes, customers or claims that the inputs do not state.
The version's supplementaryContext, when present, is an instruction from the business for this audience: follow it.
An audience with a "segment" is not one person but the anonymous visitors it describes (e.g. "Visitors whose UTM source is linkedin and whose country is DE"): write for them, without naming any person. For them you may also write visit tokens, filled from each visit: {{ utm.source }}, {{ utm.medium }}, {{ utm.campaign }}, {{ utm.term }}, {{ utm.content }}, {{ query.<name> }}, {{ visitor.country }}, {{ company.name }}, {{ company.industry }}; always give them a fallback: {{ company.name | your team }}.
You may write personalisation tokens, filled when the page is served: {{ person.name }}, {{ person.firstName }}, {{ account.name }}, {{ audience.name }}; a fallback goes after a bar: {{ person.firstName | there }}.
Answer with JSON only, matching the schema: headline (at most 200 characters), subheadline (at most 500), sections (at most 50), each with a heading (at most 200) and a Markdown body (at most 20000).
Each section of the page has a layout (text when absent). Keep the page's sections in their order, each with its layout; write only their texts: the images, buttons and videos stay as they are.
Per section answer: layout; heading; body; imageAlt (hero and image_text: the image's alt text, at most 300, else ""); author and role (quote: who said it and their role, at most 200 each, else ""); items (features: the cards' title and body; faq: each question as title, its answer as body; logos: each company's name as title and "" as body; stats: each figure as value (at most 20) and what it counts as title; steps: each step's title and body; testimonials: each quote as body, who said it as author, their role as role; pricing: each plan's name as title, price (at most 20), period and its features as body; "" for a text an item's layout does not take; as many items as the page's section, in the same order; [] for other layouts). A quote, testimonial, figure or price is only ever one the inputs state.
Texts cut to fit end with "…".`;

const ELLIPSIS = '…';

/**
 * The system and user messages for one version: the inputs as JSON, with the long texts cut so
 * the two never exceed `maxChars` together. The page's section bodies and the version's
 * supplementaryContext are cut first to what fits (all to one length, longest first); the log
 * payloads and topic entries share what is left the same way.
 */
export function buildPrompt(input: GeneratorInput, maxChars: number): Prompt {
  const page = input.page.content.sections.map((s) => s.body);
  const context = input.version.supplementaryContext ?? '';
  const logs = [...input.personLogs, ...input.accountLogs].map((l) => JSON.stringify(l.payload));
  const entries = input.topics.flatMap((t) => t.entries.map((e) => e.content.content));

  const render = (first: string[], second: string[]) => {
    let i = 0;
    let j = 0;
    const a = () => first[i++] ?? '';
    const b = () => second[j++] ?? '';
    const personLogs = input.personLogs.map((l) => ({ ...l, payload: b() }));
    const accountLogs = input.accountLogs.map((l) => ({ ...l, payload: b() }));
    return JSON.stringify({
      page: { ...input.page, content: { ...input.page.content, sections: input.page.content.sections.map((s) => ({ ...s, body: a() })) } },
      audience: input.audience,
      version: {
        versionId: input.version.versionId,
        versionNumber: input.version.versionNumber,
        isNewPageAgent: input.version.isNewPageAgent,
        supplementaryContext: input.version.supplementaryContext === null ? null : a(),
      },
      person: input.person,
      account: input.account,
      personLogs,
      accountLogs,
      topics: input.topics.map((t) => ({
        title: t.title,
        purpose: t.purpose,
        entries: t.entries.map((e) => ({ type: e.content.type, content: b() })),
      })),
    });
  };

  const firstTexts = [...page, ...(input.version.supplementaryContext === null ? [] : [context])];
  const fixed =
    SYSTEM.length +
    render(
      firstTexts.map(() => ''),
      [...logs, ...entries].map(() => ''),
    ).length;
  let room = maxChars - fixed;
  for (let tries = 0; tries < 8 && room >= 0; tries++) {
    const first = cutAll(firstTexts, room);
    const left = room - first.reduce((n, t) => n + escapedLength(t), 0);
    const user = render(first, cutAll([...logs, ...entries], left));
    const over = SYSTEM.length + user.length - maxChars;
    if (over <= 0) return { system: SYSTEM, user };
    room -= over; // JSON escapes made it longer than measured: try again with less
  }
  // Only when the inputs without their long texts are already too long: a hard cut keeps the promise.
  return { system: SYSTEM, user: render([], []).slice(0, Math.max(0, maxChars - SYSTEM.length)) };
}

/** Every text cut to one length (a text shorter than it stays whole), the largest that keeps the sum within `budget`. */
export function cutAll(texts: string[], budget: number): string[] {
  const lengths = texts.map(escapedLength);
  const total = lengths.reduce((n, l) => n + l, 0);
  if (total <= budget) return texts;
  const sorted = [...lengths].sort((x, y) => x - y);
  let left = Math.max(0, budget);
  let cap = 0;
  for (let k = 0; k < sorted.length; k++) {
    const remaining = sorted.length - k;
    const length = sorted[k] as number;
    if (length * remaining > left) {
      cap = Math.floor(left / remaining);
      break;
    }
    left -= length;
  }
  return texts.map((t, k) => ((lengths[k] as number) <= cap ? t : cut(t, cap)));
}

function cut(text: string, cap: number): string {
  if (cap <= ELLIPSIS.length) return '';
  let end = cap - ELLIPSIS.length;
  // Never split a surrogate pair.
  if (/[\uD800-\uDBFF]/.test(text.charAt(end - 1))) end -= 1;
  return text.slice(0, end) + ELLIPSIS;
}

/** Its length inside a JSON string (quotes aside). */
const escapedLength = (text: string) => JSON.stringify(text).length - 2;
