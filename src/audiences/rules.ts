import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { CHANNEL_GROUPS, CHANNELS } from '../db/enums.js';
import { AppError, type FieldError } from '../http/errors.js';
import { StringEnum } from '../http/schemas.js';

/**
 * A segment's rules (issue 39): which anonymous visitors an audience is for, from what the visit
 * itself says (its URL, referrer, country, device, language) and the company the enrichment
 * provider names. Checked here at write time, evaluated in memory at serving time
 * (site/serve/choose.ts), and said in words for the console, the agent and the template.
 */

export const UTM_PARTS = ['source', 'medium', 'campaign', 'term', 'content'] as const;
const FIELD_PATTERN =
  '^(utm\\.(source|medium|campaign|term|content)|query\\.[A-Za-z0-9_-]{1,40}|referrer\\.(host|channel)|visitor\\.(country|device|language|returning|channelGroup)|company\\.(name|domain|industry|employees|country))$';
export const OPERATORS = ['equals', 'not_equals', 'contains', 'starts_with', 'ends_with', 'in', 'exists', 'gte', 'lte'] as const;
export type Operator = (typeof OPERATORS)[number];
export const MAX_CONDITIONS = 20;
/** Live segment audiences a page may have (issue 45): every uncached view matches them all. */
export const MAX_SEGMENTS_PER_PAGE = 50;
export const MAX_IN_VALUES = 100;
const MAX_VALUE_LENGTH = 255;

const VALUE_WORDS =
  'A string (case-insensitive), a number for gte and lte, an array of 1–100 strings for in, a boolean for exists (default true) and visitor.returning';
const RuleString = Type.String({ minLength: 1, maxLength: MAX_VALUE_LENGTH });

/** A condition as sent: its value is one of four shapes (anyOf: each branch says what is wrong). */
function conditionSchema(value: TSchema) {
  return Type.Object(
    {
      field: Type.String({
        pattern: FIELD_PATTERN,
        description:
          'utm.source|medium|campaign|term|content, query.<name> (1–40 of A-Z a-z 0-9 _ -), referrer.host|channel, visitor.country|device|language|returning|channelGroup, company.name|domain|industry|employees|country',
      }),
      operator: StringEnum(OPERATORS),
      value: Type.Optional(value),
    },
    { additionalProperties: false },
  );
}

function rulesSchema(value: TSchema) {
  return Type.Object(
    {
      match: StringEnum(['all', 'any'] as const),
      conditions: Type.Array(conditionSchema(value), { minItems: 1, maxItems: MAX_CONDITIONS }),
    },
    { additionalProperties: false, description: 'Extension. Which visitors a segment audience is for; null for other audiences' },
  );
}

/** Rules in a request: every bound checked by the schema, the rest by checkRules. */
export const RulesInput = rulesSchema(
  Type.Union([RuleString, Type.Number(), Type.Boolean(), Type.Array(RuleString, { minItems: 1, maxItems: MAX_IN_VALUES })], {
    description: VALUE_WORDS,
  }),
);
/** Rules in an answer: the value as stored (checked when written), described rather than re-stated. */
export const Rules = rulesSchema(Type.Unsafe<string | number | boolean | string[]>({ description: VALUE_WORDS }));
export type Rules = Static<typeof RulesInput>;
export type Condition = Rules['conditions'][number];

export const DEVICES = ['desktop', 'mobile', 'tablet'] as const;
const ENUMERATED: Record<string, readonly string[]> = {
  'visitor.device': DEVICES,
  'referrer.channel': CHANNELS,
  'visitor.channelGroup': CHANNEL_GROUPS,
};

/** The checks a schema cannot say: which value each operator takes on each field. Errors at `at`'s pointers. */
export function checkRules(rules: Rules, at: string): void {
  const errors: FieldError[] = [];
  for (const [i, c] of rules.conditions.entries()) {
    checkCondition(c, `${at}/conditions/${i}/value`, errors);
  }
  if (errors.length > 0) throw new AppError('validation_failed', errors.map((e) => `${e.path} ${e.message}`).join('; '), errors);
}

function checkCondition(c: Condition, path: string, errors: FieldError[]): void {
  const fail = (message: string): void => {
    errors.push({ path, message });
  };
  const v = c.value;
  if (c.operator === 'exists') {
    if (v !== undefined && typeof v !== 'boolean') fail('must be true or false (or left out) for exists');
    return;
  }
  if (v === undefined) {
    fail('is required');
    return;
  }
  if (c.field === 'visitor.returning') {
    if (typeof v !== 'boolean' || (c.operator !== 'equals' && c.operator !== 'not_equals')) {
      fail('visitor.returning takes equals or not_equals with true or false');
    }
    return;
  }
  if (c.operator === 'gte' || c.operator === 'lte') {
    if (typeof v !== 'number') fail(`must be a number for ${c.operator}`);
    return;
  }
  if (c.operator === 'in') {
    if (!Array.isArray(v)) {
      fail('must be an array of 1–100 strings for in');
      return;
    }
    for (const [j, item] of v.entries()) {
      const problem = valueProblem(c.field, item);
      if (problem) errors.push({ path: `${path}/${j}`, message: problem });
    }
    return;
  }
  if (typeof v !== 'string') {
    fail(`must be a string for ${c.operator}`);
    return;
  }
  if (c.operator === 'equals' || c.operator === 'not_equals') {
    const problem = valueProblem(c.field, v);
    if (problem) fail(problem);
  }
}

function valueProblem(field: string, value: string): string | undefined {
  const allowed = ENUMERATED[field];
  if (allowed && !allowed.some((a) => a.toLowerCase() === value.toLowerCase())) return `must be one of: ${allowed.join(', ')}`;
  if ((field === 'visitor.country' || field === 'company.country') && !/^[A-Za-z]{2}$/.test(value)) {
    return 'must be an ISO 3166-1 alpha-2 country code, like DE';
  }
  return undefined;
}

/** A visit's value of a field: a string, a number, a boolean, or null when the visit does not say. */
export type FieldValue = string | number | boolean | null;

/** A condition ready to test: its value lowercased once. */
interface Compiled {
  field: string;
  test: (actual: FieldValue) => boolean;
  /** A string `equals`: the value lowercased, which a visit's value must be (indexRules keys by it). */
  equals?: string;
}

export interface CompiledRules {
  all: boolean;
  conditions: Compiled[];
  /** The fields the rules read: a visit's facts are gathered only for these. */
  fields: ReadonlySet<string>;
}

const lower = (v: FieldValue) => (v === null ? null : String(v).toLowerCase());

function compileCondition(c: Condition): Compiled {
  const v = c.value;
  const want = typeof v === 'string' ? v.toLowerCase() : '';
  const test = ((): ((actual: FieldValue) => boolean) => {
    switch (c.operator) {
      case 'exists': {
        const wanted = v !== false;
        return (a) => (a !== null && a !== '') === wanted;
      }
      case 'gte':
      case 'lte': {
        const bound = Number(v);
        return (a) => {
          const n = typeof a === 'number' ? a : a === null || a === '' || typeof a === 'boolean' ? Number.NaN : Number(a);
          return Number.isFinite(n) && (c.operator === 'gte' ? n >= bound : n <= bound);
        };
      }
      case 'in': {
        const set = new Set((Array.isArray(v) ? v : []).map((s) => s.toLowerCase()));
        return (a) => a !== null && set.has(lower(a) ?? '');
      }
      default:
        if (typeof v === 'boolean') return c.operator === 'equals' ? (a) => a === v : (a) => a !== v;
        return STRING_TESTS[c.operator as keyof typeof STRING_TESTS](want);
    }
  })();
  return { field: c.field, test, ...(c.operator === 'equals' && typeof v === 'string' ? { equals: want } : {}) };
}

const STRING_TESTS = {
  equals: (w: string) => (a: FieldValue) => lower(a) === w,
  // A visit that does not say is not "something else": it matches not_equals.
  not_equals: (w: string) => (a: FieldValue) => lower(a) !== w,
  contains: (w: string) => (a: FieldValue) => lower(a)?.includes(w) === true,
  starts_with: (w: string) => (a: FieldValue) => lower(a)?.startsWith(w) === true,
  ends_with: (w: string) => (a: FieldValue) => lower(a)?.endsWith(w) === true,
} satisfies Record<string, (w: string) => (a: FieldValue) => boolean>;

export function compileRules(rules: Rules): CompiledRules {
  return {
    all: rules.match === 'all',
    conditions: rules.conditions.map(compileCondition),
    fields: new Set(rules.conditions.map((c) => c.field)),
  };
}

/**
 * Whether a visit matches: `fact` answers a field's value (read lazily, so unused facts cost
 * nothing); a condition on a field the visitor `withheld` (Sec-GPC) never matches.
 */
export function matches(rules: CompiledRules, fact: (field: string) => FieldValue, withheld?: (field: string) => boolean): boolean {
  const holds = (c: Compiled) => !withheld?.(c.field) && c.test(fact(c.field));
  return rules.all ? rules.conditions.every(holds) : rules.conditions.some(holds);
}

/**
 * Rules in the order a visit is matched (a page's segments), indexed so that matching does not
 * grow with their number: rules whose conditions must all hold and include a string `equals` are
 * listed under that field and value, and can only match a visit with that value; the rest are
 * tried in turn. Positions are into the list indexed.
 */
export interface RulesIndex {
  keyed: Map<string, Map<string, number[]>>;
  unkeyed: number[];
}

export function indexRules(list: readonly { rules: CompiledRules }[]): RulesIndex {
  const keyed = new Map<string, Map<string, number[]>>();
  const unkeyed: number[] = [];
  for (const [i, { rules }] of list.entries()) {
    const key = rules.all ? rules.conditions.find((c) => c.equals !== undefined) : undefined;
    if (key?.equals === undefined) {
      unkeyed.push(i);
      continue;
    }
    const byValue = keyed.get(key.field) ?? new Map<string, number[]>();
    keyed.set(key.field, byValue);
    const at = byValue.get(key.equals);
    if (at) at.push(i);
    else byValue.set(key.equals, [i]);
  }
  return { keyed, unkeyed };
}

/** The position of the first item of `list` whose rules the visit matches (as `matches` would find in turn), or -1. */
export function firstMatch(
  list: readonly { rules: CompiledRules }[],
  index: RulesIndex,
  fact: (field: string) => FieldValue,
  withheld?: (field: string) => boolean,
): number {
  let best = list.length;
  // Each list is in order: its first match is its best, and none past the best so far can win.
  const tryIn = (positions: readonly number[]) => {
    for (const i of positions) {
      if (i >= best) return;
      const rules = list[i]?.rules;
      if (rules && matches(rules, fact, withheld)) {
        best = i;
        return;
      }
    }
  };
  for (const [field, byValue] of index.keyed) {
    if (withheld?.(field)) continue;
    const positions = byValue.get(lower(fact(field)) ?? '');
    if (positions) tryIn(positions);
  }
  tryIn(index.unkeyed);
  return best < list.length ? best : -1;
}

const FIELD_WORDS: Record<string, string> = {
  'utm.source': 'UTM source',
  'utm.medium': 'UTM medium',
  'utm.campaign': 'UTM campaign',
  'utm.term': 'UTM term',
  'utm.content': 'UTM content',
  'referrer.host': 'referring site',
  'referrer.channel': 'channel',
  'visitor.country': 'country',
  'visitor.device': 'device',
  'visitor.language': 'language',
  'visitor.returning': 'visit',
  'visitor.channelGroup': 'channel group',
  'company.name': "company's name",
  'company.domain': "company's domain",
  'company.industry': "company's industry",
  'company.employees': "company's number of employees",
  'company.country': "company's country",
};

const OPERATOR_WORDS: Record<Operator, string> = {
  equals: 'is',
  not_equals: 'is not',
  contains: 'contains',
  starts_with: 'starts with',
  ends_with: 'ends with',
  in: 'is one of',
  exists: 'is known',
  gte: 'is at least',
  lte: 'is at most',
};

export const fieldWords = (field: string) => FIELD_WORDS[field] ?? `query parameter "${field.slice('query.'.length)}"`;

/** One condition in plain words: `whose UTM source is linkedin`. */
export function conditionInWords(c: Condition): string {
  if (c.field === 'visitor.returning') {
    const returning = (c.value === true) === (c.operator === 'equals');
    return returning ? 'who came back today' : 'on their first visit today';
  }
  const subject = `whose ${fieldWords(c.field)}`;
  if (c.operator === 'exists') return `${subject} ${c.value === false ? 'is not known' : 'is known'}`;
  const value = Array.isArray(c.value) ? c.value.join(', ') : String(c.value);
  return `${subject} ${OPERATOR_WORDS[c.operator]} ${value}`;
}

/** The rules in plain words, for the agent, the template generator and the console: "Visitors whose UTM source is linkedin". */
export function rulesInWords(rules: Rules): string {
  const joiner = rules.match === 'all' ? ' and ' : ' or ';
  return `Visitors ${rules.conditions.map(conditionInWords).join(joiner)}`;
}

/** The stored rules of an audience row, or null for an audience that is not a segment. */
export const parseRules = (text: string | null): Rules | null => (text === null ? null : (JSON.parse(text) as Rules));
