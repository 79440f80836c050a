import {
  Type,
  type Static,
  type TArray,
  type TInteger,
  type TNumber,
  type TObject,
  type TProperties,
  type TSchema,
  type TString,
  type TUnsafe,
} from '@sinclair/typebox';

/** Shared schema pieces: every resource schema builds on these rather than restating them. */

export const MAX_SAFE_INTEGER = Number.MAX_SAFE_INTEGER; // 9007199254740991, the reference's upper bound

/**
 * "x or null" in the reference: one JSON Schema with `type: [x, "null"]`, so string bounds apply to
 * strings only and a bad value gets one clear message instead of one per anyOf branch.
 */
export function Nullable<T extends TString | TNumber | TInteger | TObject | TArray>(schema: T) {
  const { type, ...rest } = schema as T & { type: string | string[] };
  return Type.Unsafe<Static<T> | null>({ ...rest, type: Array.isArray(type) ? type : [type, 'null'] });
}

/** A string from a fixed set, as one `enum` (one clear message when it fails, not one per branch). */
export function StringEnum<const T extends readonly string[]>(values: T, options: { description?: string; default?: T[number] } = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** ISO 8601 in UTC with milliseconds, e.g. `2026-11-22T12:00:00.000Z`. */
export const Timestamp = Type.String({ format: 'date-time', examples: ['2026-11-22T12:00:00.000Z'] });
export const NullableTimestamp = Nullable(Timestamp);

export const FieldErrorSchema = Type.Object(
  {
    /** A JSON Pointer, e.g. `/phoneNumber`: the field itself, even when it is missing. */
    path: Type.String(),
    message: Type.String(),
  },
  { $id: 'FieldError' },
);

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String(),
    requestId: Type.String(),
    errors: Type.Optional(Type.Array(FieldErrorSchema)),
  },
  { description: 'RFC 9457 problem details', $id: 'Problem' },
);

const problemResponse = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ProblemSchema } },
});

/** Response schemas for a route: its success body plus the problem body for every error. */
export function responses<S extends Record<number, TSchema>>(success: S) {
  return {
    ...success,
    '4xx': problemResponse('The request was refused: see `code` and `errors`'),
    '5xx': problemResponse('The service failed: quote `requestId` when reporting it'),
  };
}

/** Responses of a route that answers an HTML document (a page preview), and problems as every route. */
export function htmlResponses(description: string) {
  return {
    200: { description, content: { 'text/html': { schema: Type.String() } } },
    '4xx': problemResponse('The request was refused: see `code` and `errors`'),
    '5xx': problemResponse('The service failed: quote `requestId` when reporting it'),
  };
}

/** Responses of a route that answers bytes of one of `types` (a file download), and problems as every route. */
export function bytesResponses(description: string, types: readonly string[]) {
  return {
    200: {
      description,
      content: Object.fromEntries(types.map((type) => [type, { schema: Type.Unsafe<Buffer>({ type: 'string', format: 'binary' }) }])),
    },
    '4xx': problemResponse('The request was refused: see `code` and `errors`'),
    '5xx': problemResponse('The service failed: quote `requestId` when reporting it'),
  };
}

/** An absolute `http:` or `https:` URL. */
export const HttpUrl = Type.String({
  maxLength: 2048,
  format: 'uri',
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#]',
  description: 'An absolute http(s) URL',
});

/** The body of an action that takes none: `{}` or no body at all; any field is a 400. */
export const EmptyBody = Nullable(Type.Object({}, { additionalProperties: false, $id: 'EmptyBody' }));

/** The query string of a route that takes no parameters: any parameter is a 400, not silently ignored. */
export const NoQuery = Type.Object({}, { additionalProperties: false });

export const NoContent = Type.Null({ description: 'No content' });

export const LimitParam = Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Page size, 1 to 100' });
export const CursorParam = Type.String({ minLength: 1, maxLength: 2048, description: 'The nextCursor of the previous page' });

/** Query parameters of every list; an endpoint adds its own filters to these. */
export function ListQuery<P extends TProperties>(filters: P) {
  return Type.Object({ ...filters, cursor: Type.Optional(CursorParam), limit: Type.Optional(LimitParam) }, { additionalProperties: false });
}

/** A list's page size when its items carry their content (`?include=content`, issue 45): 10 at most, 10 by default. */
export const MAX_LIMIT_WITH_CONTENT = 10;

/**
 * Query parameters of a list whose items leave out their `content` (a page's body, up to 512 KB)
 * unless `include=content` asks for it. `limit` has no schema default here: without one it is 20,
 * or 10 with `include=content` (`limitWithContent` checks and settles it).
 */
export function ContentListQuery<P extends TProperties>(filters: P) {
  return Type.Object(
    {
      ...filters,
      include: Type.Optional(
        StringEnum(['content'] as const, {
          description: `content: each item carries its content too; limit is then at most ${MAX_LIMIT_WITH_CONTENT} (default ${MAX_LIMIT_WITH_CONTENT})`,
        }),
      ),
      cursor: Type.Optional(CursorParam),
      limit: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: 100,
          description: `Page size, 1 to 100 (default 20); with include=content, 1 to ${MAX_LIMIT_WITH_CONTENT} (default ${MAX_LIMIT_WITH_CONTENT})`,
        }),
      ),
    },
    { additionalProperties: false },
  );
}

/**
 * `totalCount` counts every match unless a list says otherwise, in its own description. The envelope
 * of a named item is named after it (`Person` → `PersonList`), so the document declares it once.
 */
export function ListEnvelope<T extends TSchema>(item: T, about: { totalCount?: string } = {}) {
  const named = typeof item.$id === 'string' ? { $id: `${item.$id}List` } : {};
  return Type.Object(
    {
      items: Type.Array(item),
      hasMore: Type.Boolean(),
      nextCursor: Nullable(Type.String()),
      totalCount: Type.Integer({
        minimum: 0,
        maximum: MAX_SAFE_INTEGER,
        ...(about.totalCount === undefined ? {} : { description: about.totalCount }),
      }),
    },
    named,
  );
}
/** A list's response as the code builds it: the envelope's type, over items of any type. */
export type ListPage<T> = Static<ReturnType<typeof ListEnvelope<TUnsafe<T>>>>;
