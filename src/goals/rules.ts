import type { GoalKind } from '../db/enums.js';
import { type FieldError, invalidField } from '../http/errors.js';
import { throwIfAny } from '../http/round-trip.js';

/** What a goal or a funnel step counts, as stored: the kind, its one field (`target`), and a form's page. */
export interface Target {
  kind: GoalKind;
  target: string;
  pageId: string | null;
  /** A scroll goal's depth (1 to 100); its `target` is the path glob. */
  threshold?: number | null;
}

/** The field each kind takes; a form's `pageId` is optional, every other kind's field is required. */
export const KIND_FIELD = { form: 'pageId', action: 'actionPurpose', path: 'path', event: 'eventName', scroll: 'pathPattern' } as const;
type KindField = (typeof KIND_FIELD)[GoalKind];

export type TargetValues = { kind: GoalKind; threshold?: number | null } & Partial<Record<KindField, string | null>>;

/**
 * The stored target of a goal or step (`at`: the JSON pointer of the object, '' for a body): the
 * kind's field is required (but a form's page), and another kind's field is refused, every bad
 * field named at once.
 */
export function resolveTarget(values: TargetValues, at = ''): Target {
  const errors: FieldError[] = [];
  const own = KIND_FIELD[values.kind];
  for (const field of Object.values(KIND_FIELD)) {
    const value = values[field];
    if (field === own && (value === undefined || value === null) && values.kind !== 'form') {
      errors.push({ path: `${at}/${field}`, message: `is required for kind ${values.kind}` });
    } else if (field !== own && value !== undefined && value !== null) {
      errors.push({ path: `${at}/${field}`, message: `is only for kind ${kindOf(field)}` });
    }
  }
  if (values.kind === 'scroll' && (values.threshold === undefined || values.threshold === null)) {
    errors.push({ path: `${at}/threshold`, message: 'is required for kind scroll' });
  } else if (values.kind !== 'scroll' && values.threshold !== undefined && values.threshold !== null) {
    errors.push({ path: `${at}/threshold`, message: 'is only for kind scroll' });
  }
  throwIfAny(errors);
  const value = values[own] ?? null;
  if (values.kind === 'scroll') return { kind: 'scroll', target: value ?? '', pageId: null, threshold: values.threshold ?? null };
  return values.kind === 'form' ? { kind: 'form', target: '', pageId: value } : { kind: values.kind, target: value ?? '', pageId: null };
}

const kindOf = (field: KindField) => (Object.entries(KIND_FIELD).find(([, f]) => f === field)?.[0] ?? '') as GoalKind;

/** The API's fields of a stored target: the kind's own field set, the others null. */
export function targetFields(t: Target) {
  return {
    kind: t.kind,
    pageId: t.kind === 'form' ? t.pageId : null,
    actionPurpose: t.kind === 'action' ? t.target : null,
    path: t.kind === 'path' ? t.target : null,
    eventName: t.kind === 'event' ? t.target : null,
  };
}

/**
 * A path glob as a LIKE pattern on the lowercased path: `*` any characters (`/` too), `?` one,
 * everything else itself, matched without regard to ASCII case on both databases.
 */
export function likeOfGlob(glob: string): string {
  return glob
    .toLowerCase()
    .replace(/[\\%_]/g, (c) => `\\${c}`)
    .replace(/\*/g, '%')
    .replace(/\?/g, '_');
}

/** ISO 4217 codes as the platform's ICU data knows them (current currencies). */
const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

export function checkCurrency(currency: string | null | undefined, path = '/currency'): string | null {
  if (currency === undefined || currency === null) return null;
  if (!CURRENCIES.has(currency)) throw invalidField(path, 'is not an ISO 4217 currency code (upper case, e.g. EUR)');
  return currency;
}
