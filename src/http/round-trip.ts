import { isDeepStrictEqual } from 'node:util';
import { CloneType, Type, type TObject, type TOptional, type TProperties, type TSchema } from '@sinclair/typebox';
import { AppError, type FieldError, pointerSegment } from './errors.js';

/**
 * Read-modify-write: a client reads a resource, changes a field and sends the whole body back. So
 * a PATCH body takes the resource's read-only fields too, each accepted only when it equals the
 * current value (400 naming it otherwise), except the `ignored` ones, which change on every read
 * (signed links) and are accepted with any value of their type.
 */
type ReadOnly = 'compare' | 'ignore';
const READ_ONLY = new WeakMap<TSchema, Map<string, ReadOnly>>();

type RoundTripProperties<R extends TProperties, U extends TProperties> = U & {
  [K in Exclude<keyof R, keyof U>]: TOptional<R[K]>;
};

const COMPARED = 'Read-only: accepted when it equals the current value (so a resource read can be sent back), otherwise 400';
const IGNORED = 'Read-only and made anew on every read: accepted with any value and ignored';

/** The update's own fields, plus every other field of the resource, optional and marked read-only. */
export function RoundTrip<R extends TProperties, U extends TProperties>(
  resource: TObject<R>,
  update: TObject<U>,
  options: { ignored?: readonly (keyof R & string)[] } = {},
): TObject<RoundTripProperties<R, U>> {
  const kinds = new Map<string, ReadOnly>();
  const properties: TProperties = { ...update.properties };
  for (const [key, schema] of Object.entries(resource.properties)) {
    if (key in update.properties) continue;
    const kind: ReadOnly = options.ignored?.includes(key) ? 'ignore' : 'compare';
    kinds.set(key, kind);
    properties[key] = Type.Optional(readOnly(schema, kind === 'ignore' ? IGNORED : COMPARED));
  }
  const { properties: _, required: __, ...rest } = update as TObject;
  const schema = Type.Object(properties, { ...rest, additionalProperties: false });
  READ_ONLY.set(schema, kinds);
  return schema as unknown as TObject<RoundTripProperties<R, U>>;
}

/** A read-only copy of a field's schema (`readOnly` is an annotation: Ajv does not enforce it). */
export function readOnly<T extends TSchema>(schema: T, description = COMPARED): T {
  // A copy is another schema: it must not claim the original's $id.
  const { $id: _, ...copy } = CloneType(schema, { readOnly: true, description });
  return copy as T;
}

/**
 * The changes a body asks for: its read-only fields checked against the current resource (all
 * mismatches named at once, with `errors` found by the caller) and left out, and every field that
 * equals its current value left out, so a body sent back unchanged changes nothing at all.
 */
export function settle<B extends object>(schema: TSchema, body: B, current: object, errors: FieldError[] = []): Partial<B> {
  const kinds = READ_ONLY.get(schema);
  const now = current as Record<string, unknown>;
  const changes: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    const kind = kinds?.get(key);
    const same = isDeepStrictEqual(value, now[key]);
    if (kind === 'compare' && !same) errors.push(readOnlyError(`/${pointerSegment(key)}`));
    else if (kind === undefined && !same) changes[key] = value;
  }
  throwIfAny(errors);
  return changes as Partial<B>;
}

export const readOnlyError = (path: string, message = 'is read-only: it must equal the current value'): FieldError => ({
  path,
  message,
});

export function throwIfAny(errors: FieldError[]): void {
  if (errors.length === 0) return;
  throw new AppError('validation_failed', errors.map((e) => `${e.path} ${e.message}`).join('; '), errors);
}

/**
 * JSON Merge Patch (RFC 7396): members of the patch replace the target's, `null` removes one,
 * objects merge recursively, anything else (arrays included) replaces whole.
 */
export function mergePatch<T extends Record<string, unknown>>(target: T | null | undefined, patch: Record<string, unknown>): T {
  const result: Record<string, unknown> = { ...(target ?? {}) };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else if (isObject(value)) result[key] = mergePatch(isObject(result[key]) ? result[key] : {}, value);
    else result[key] = value;
  }
  return result as T;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
