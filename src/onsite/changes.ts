import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { parse, type Selector } from 'css-what';
import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { fieldErrors, type FieldError } from '../http/errors.js';
import { StringEnum } from '../http/schemas.js';
import { compileJsonCheck } from '../http/validation.js';
import { Section, contentErrors } from '../pages/index.js';

/**
 * An experience's changes (issue 48): what the script does to the elements a CSS selector names.
 * Checked here at write time; the script checks attribute values again once tokens are filled
 * (`filledUrlIsSafe`). The schema says the shape; `changeErrors` says what depends on the action.
 */

export const CHANGE_ACTIONS = ['text', 'attribute', 'hide', 'section'] as const;
export type ChangeAction = (typeof CHANGE_ACTIONS)[number];
export const CHANGE_ATTRIBUTES = ['href', 'src', 'alt', 'title', 'placeholder', 'aria-label'] as const;
export type ChangeAttribute = (typeof CHANGE_ATTRIBUTES)[number];
/** The attributes that load or lead somewhere: https or a path only. */
export const URL_ATTRIBUTES: readonly ChangeAttribute[] = ['href', 'src'];
export const PLACEMENTS = ['before', 'after'] as const;

export const MIN_CHANGES = 1;
export const MAX_CHANGES = 50;
export const MAX_SELECTOR_LENGTH = 500;
export const MAX_TEXT_LENGTH = 5000;
export const MAX_ATTRIBUTE_LENGTH = 2048;

/** A change as stored and as answered: the fields of its action only. */
export type Change =
  | { selector: string; action: 'text'; value: string }
  | { selector: string; action: 'attribute'; attribute: ChangeAttribute; value: string }
  | { selector: string; action: 'hide' }
  | { selector: string; action: 'section'; value: Section; placement: (typeof PLACEMENTS)[number] };

const VALUE_WORDS =
  'text: the new text (at most 5,000 characters; takes visit tokens like {{utm.term | fallback}}, always as text). attribute: the new value (at most 2,048 characters; takes tokens; href and src are https://host… or a path /…). section: one section of the page content schema (any layout), rendered with the brand in a shadow root. Not with hide';

const changeFields = <V extends TSchema>(value: V) => ({
  selector: Type.String({
    minLength: 1,
    maxLength: MAX_SELECTOR_LENGTH,
    description: 'A CSS selector (at most 500 characters), parsed by the service: a selector it cannot parse is 400 here',
  }),
  action: StringEnum(CHANGE_ACTIONS, { description: 'Any other action is 400 here' }),
  value: Type.Optional(value),
  attribute: Type.Optional(StringEnum(CHANGE_ATTRIBUTES, { description: 'attribute (required): which attribute is set. Not elsewhere' })),
  placement: Type.Optional(
    StringEnum(PLACEMENTS, { description: 'section (required): the section is inserted before or after the element. Not elsewhere' }),
  ),
});

/** A change in a request: the value's shape depends on the action, so `changeErrors` checks it. */
export const ChangeInput = Type.Object(changeFields(Type.Unsafe<string | Section>({ description: VALUE_WORDS })), {
  additionalProperties: false,
  $id: 'ExperienceChangeInput',
});
export type ChangeInput = Static<typeof ChangeInput>;
export const ChangesInput = Type.Array(ChangeInput, { minItems: MIN_CHANGES, maxItems: MAX_CHANGES, description: '1–50 changes' });

/** A change in an answer, as stored. */
export const ChangeSchema = Type.Object(changeFields(Type.Union([Type.String(), Section], { description: VALUE_WORDS })), {
  $id: 'ExperienceChange',
});

// Pseudo-classes a selector may use: structural and form state ones, which hold while the page is
// shown. Pseudo-elements name no element, user-action ones (:hover) hold only for a moment, and a
// library's own (:contains) is not CSS: the browser would throw on them.
const SELECTOR_PSEUDOS = new Set(['not', 'is', 'where', 'has', 'matches']);
const NTH_PSEUDOS = new Set(['nth-child', 'nth-last-child', 'nth-of-type', 'nth-last-of-type']);
const PLAIN_PSEUDOS = new Set([
  'first-child',
  'last-child',
  'only-child',
  'first-of-type',
  'last-of-type',
  'only-of-type',
  'empty',
  'root',
  'checked',
  'disabled',
  'enabled',
  'required',
  'optional',
  'read-only',
  'read-write',
  'placeholder-shown',
  'link',
  'any-link',
  'defined',
]);
const NTH = /^\s*(?:odd|even|[+-]?\d*n(?:\s*[+-]\s*\d+)?|[+-]?\d+)\s*$/i;
const TAG = /^(?:[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9_.-]*)?)$/;
const COMBINATORS = new Set(['child', 'parent', 'sibling', 'adjacent', 'descendant', 'column-combinator']);

function tokensProblem(tokens: Selector[], relative: boolean): string | undefined {
  if (tokens.length === 0) return 'is an empty selector';
  const first = tokens[0];
  const last = tokens[tokens.length - 1];
  if (last && COMBINATORS.has(last.type)) return 'ends with a combinator';
  if (first && COMBINATORS.has(first.type) && first.type !== 'descendant' && !relative) return 'starts with a combinator';
  for (const t of tokens) {
    if (t.type === 'pseudo-element') return `names the pseudo-element ::${t.name}, which is not an element`;
    if (t.type === 'parent' || t.type === 'column-combinator') return 'uses a combinator browsers do not support';
    if ((t.type === 'tag' || t.type === 'attribute' || t.type === 'universal') && t.namespace !== null) return 'uses a namespace';
    if (t.type === 'tag' && !TAG.test(t.name)) return `has "${t.name}" where an element name should be`;
    if (t.type === 'pseudo') {
      const problem = pseudoProblem(t.name, t.data);
      if (problem) return problem;
    }
  }
  return undefined;
}

function pseudoProblem(name: string, data: unknown): string | undefined {
  if (SELECTOR_PSEUDOS.has(name)) {
    if (!Array.isArray(data)) return `:${name}() takes selectors`;
    for (const inner of data as Selector[][]) {
      const problem = tokensProblem(inner, name === 'has');
      if (problem) return `:${name}(): ${problem}`;
    }
    return undefined;
  }
  if (NTH_PSEUDOS.has(name)) return typeof data === 'string' && NTH.test(data) ? undefined : `:${name}() takes an+b, odd or even`;
  if (name === 'lang')
    return typeof data === 'string' && /^[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*$/.test(data) ? undefined : ':lang() takes a language tag';
  if (PLAIN_PSEUDOS.has(name)) return data === null ? undefined : `:${name} takes no argument`;
  return `uses :${name}, which is not a pseudo-class the script supports`;
}

/** What is wrong with a selector, or undefined. Parsed with css-what; then held to what `querySelectorAll` takes. */
export function selectorProblem(selector: string): string | undefined {
  if (selector.length === 0 || selector.length > MAX_SELECTOR_LENGTH) return `must be 1 to ${MAX_SELECTOR_LENGTH} characters`;
  // Control characters are not CSS text; they would only hide what the selector says.
  if (/\p{Cc}/u.test(selector.replace(/[\t\n\r\f]/g, ''))) return 'holds a control character';
  let parsed: Selector[][];
  try {
    parsed = parse(selector);
  } catch (err) {
    return `is not a CSS selector: ${err instanceof Error ? err.message : 'it could not be parsed'}`;
  }
  if (parsed.length === 0) return 'is an empty selector';
  for (const tokens of parsed) {
    const problem = tokensProblem(tokens, false);
    if (problem) return problem;
  }
  return undefined;
}

const TOKEN = /\{\{[^{}]*\}\}/g;
const UNSAFE_CHARS = /[\p{Cc}\s\\]/u;

/**
 * Whether a filled URL value (no tokens left) is https or a path: never javascript:, data:,
 * a protocol-relative `//host` or `/\host`, nor one hidden by spaces or control characters.
 */
export function filledUrlIsSafe(value: string): boolean {
  if (UNSAFE_CHARS.test(value)) return false;
  if (value.startsWith('/')) return !value.startsWith('//');
  if (!/^https:\/\//i.test(value)) return false;
  const url = URL.parse(value);
  return url !== null && url.protocol === 'https:' && url.hostname !== '' && url.username === '' && url.password === '';
}

/**
 * What is wrong with an href or src as written, tokens included: its scheme and host (or the first
 * segment of a path) must be written out, so no filled value can make it point elsewhere.
 */
export function urlValueProblem(value: string): string | undefined {
  const firstToken = value.search(/\{\{/);
  const fixed = firstToken === -1 ? value : value.slice(0, firstToken);
  const words = 'must be https://host… or a path /… (never javascript:, data: or //host)';
  if (!filledUrlIsSafe(value.replace(TOKEN, 'x'))) return words;
  if (value.startsWith('/')) {
    if (fixed.length < 2) return `${words}; a token may not start the path`;
    return undefined;
  }
  // https://host then / ? or #: a token only after the host ends.
  const host = /^https:\/\/[^/?#{}]+[/?#]/i.exec(fixed);
  if (firstToken !== -1 && !host) return `${words}; a token may come only after the host`;
  return undefined;
}

function absent(change: Record<string, unknown>, fields: readonly string[], at: string, action: string): FieldError[] {
  return fields
    .filter((f) => change[f] !== undefined)
    .map((f) => ({ path: `${at}/${f}`, message: `is not a field of a ${action} change` }));
}

const isSection = compileJsonCheck(Section);

function stringValue(value: unknown, max: number, at: string): FieldError[] {
  if (value === undefined) return [{ path: `${at}/value`, message: 'is required' }];
  if (typeof value !== 'string') return [{ path: `${at}/value`, message: 'must be a string' }];
  if (value.length > max) return [{ path: `${at}/value`, message: `must be at most ${max} characters` }];
  return [];
}

/** The checks of one change that need no database. */
export function changeShapeErrors(change: ChangeInput, at: string): FieldError[] {
  const record = change as Record<string, unknown>;
  const errors: FieldError[] = [];
  const selector = selectorProblem(change.selector);
  if (selector) errors.push({ path: `${at}/selector`, message: selector });
  switch (change.action) {
    case 'text':
      errors.push(...absent(record, ['attribute', 'placement'], at, 'text'), ...stringValue(change.value, MAX_TEXT_LENGTH, at));
      break;
    case 'attribute': {
      errors.push(...absent(record, ['placement'], at, 'attribute'));
      if (change.attribute === undefined) errors.push({ path: `${at}/attribute`, message: 'is required in an attribute change' });
      const valueErrors = stringValue(change.value, MAX_ATTRIBUTE_LENGTH, at);
      errors.push(...valueErrors);
      if (valueErrors.length === 0 && change.attribute && URL_ATTRIBUTES.includes(change.attribute)) {
        const problem = urlValueProblem(change.value as string);
        if (problem) errors.push({ path: `${at}/value`, message: problem });
      }
      break;
    }
    case 'hide':
      errors.push(...absent(record, ['value', 'attribute', 'placement'], at, 'hide'));
      break;
    case 'section':
      errors.push(...absent(record, ['attribute'], at, 'section'));
      if (change.placement === undefined) errors.push({ path: `${at}/placement`, message: 'is required in a section change' });
      if (change.value === undefined) errors.push({ path: `${at}/value`, message: 'is required' });
      else if (!isSection(change.value)) {
        const schemaErrors = fieldErrors(isSection.errors ?? []);
        errors.push(...schemaErrors.map((e) => ({ path: `${at}/value${e.path}`, message: e.message })));
      }
      break;
    default:
      errors.push({ path: `${at}/action`, message: `must be one of: ${CHANGE_ACTIONS.join(', ')}` });
  }
  return errors;
}

/**
 * Every error of `changes` at `path` (`/changes`): each change's shape, then each section's layout
 * and images as a page's content is checked (pages/sections.ts), at `/changes/{i}/value/…`.
 * An experience has no page actions: a section's actionId names none, and is refused.
 */
export async function changeErrors(
  db: Kysely<Database>,
  tenantId: string,
  changes: ChangeInput[],
  path = '/changes',
): Promise<FieldError[]> {
  const errors: FieldError[] = [];
  for (const [i, change] of changes.entries()) {
    const at = `${path}/${i}`;
    const shape = changeShapeErrors(change, at);
    errors.push(...shape);
    if (shape.length > 0 || change.action !== 'section') continue;
    const content = { headline: '', subheadline: '', sections: [change.value as Section] };
    for (const e of await contentErrors(db, tenantId, content, [], '')) {
      const message = e.path.endsWith('/actionId') ? NO_ACTIONS : e.message;
      errors.push({ path: `${at}/value${e.path.replace(/^\/sections\/0/, '')}`, message });
    }
  }
  return errors;
}

const NO_ACTIONS =
  "would name one of a page's actions, and an experience has none: a cta section or a plan's button cannot be inserted (change the site's own button with a text or attribute change)";

/** A checked change as stored: only its action's fields, in one order. */
export function toStoredChange(change: ChangeInput): Change {
  const { selector } = change;
  switch (change.action) {
    case 'text':
      return { selector, action: 'text', value: change.value as string };
    case 'attribute':
      return { selector, action: 'attribute', attribute: change.attribute as ChangeAttribute, value: change.value as string };
    case 'hide':
      return { selector, action: 'hide' };
    case 'section':
      return { selector, action: 'section', value: change.value as Section, placement: change.placement ?? 'after' };
  }
}
