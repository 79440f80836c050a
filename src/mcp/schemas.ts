import { Type } from '@sinclair/typebox';
import { IdempotencyHeaders } from '../http/idempotency.js';

/** A JSON Schema as the MCP tools list it: plain JSON, no TypeBox markers. */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  description?: string;
  [keyword: string]: unknown;
}

// Keywords of OpenAPI or of schema identity, not of a standalone JSON Schema: `$id`s would clash
// when one validator compiles every tool's schema, and `discriminator` is OpenAPI's alone.
const DROPPED = new Set(['$id', 'discriminator']);
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions']);

function strip(node: unknown, keysAreNames: boolean): unknown {
  if (Array.isArray(node)) return node.map((item) => strip(item, false));
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (!keysAreNames && DROPPED.has(key)) continue;
    out[key] = strip(value, !keysAreNames && SCHEMA_MAPS.has(key));
  }
  return out;
}

/** A route's TypeBox schema as plain JSON Schema (TypeBox schemas are JSON Schema already). */
export function plainSchema(schema: object | undefined): JsonSchema {
  if (schema === undefined) return {};
  return strip(JSON.parse(JSON.stringify(schema)), false) as JsonSchema;
}

/** A path parameter's name as a tool argument: `page_id` → `pageId`, as the API's JSON names it. */
export const argumentName = (param: string) => param.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());

/**
 * One tool's arguments: the properties of a route's path parameters (named as the API's JSON names
 * them, `pageId`), query and body side by side (the API's names, so its field pointers name the
 * tool's arguments), closed to others.
 */
export function mergedInput(
  parts: { params?: (object | undefined)[]; rest?: (object | undefined)[] },
  options: { optional?: string[] } = {},
) {
  const properties: Record<string, JsonSchema> = {};
  const required = new Set<string>();
  for (const [part, rename] of [
    ...(parts.params ?? []).map((p) => [p, argumentName] as const),
    ...(parts.rest ?? []).map((p) => [p, (name: string) => name] as const),
  ]) {
    const plain = plainSchema(part);
    for (const [name, schema] of Object.entries(plain.properties ?? {})) properties[rename(name)] = schema;
    for (const name of plain.required ?? []) required.add(rename(name));
  }
  for (const name of options.optional ?? []) required.delete(name);
  const schema: JsonSchema = { type: 'object', properties, additionalProperties: false };
  if (required.size > 0) schema.required = [...required];
  return schema;
}

/** The `idempotencyKey` argument of every write tool: the header's own schema, sent as that header. */
export function idempotencyKeyArgument(): JsonSchema {
  const header = plainSchema(IdempotencyHeaders.properties['idempotency-key']);
  return {
    ...header,
    description:
      `Sent as the Idempotency-Key header: the same key on a retried call makes the change once. ${header.description ?? ''}`.trim(),
  };
}

/** The items of a list envelope's schema (`ListEnvelope(X)` → X). */
export function itemsOf(list: object | undefined): JsonSchema {
  return plainSchema(list).properties?.items?.items ?? {};
}

/** A resource's schema with more fields beside its own (a link with its URL, a page with its parts). */
export function withFields(base: JsonSchema, extra: Record<string, object>): JsonSchema {
  const { additionalProperties: _closed, ...open } = base;
  const added = Object.fromEntries(Object.entries(extra).map(([name, schema]) => [name, plainSchema(schema)]));
  return {
    ...open,
    type: 'object',
    properties: { ...base.properties, ...added },
    required: [...(base.required ?? []), ...Object.keys(added)],
  };
}

/** The address a link serves: `https://<the domain's hostname><the path>`. */
export const ServedUrl = Type.String({ format: 'uri', description: 'https://<the domain><the path>: where visitors see the page' });

/** A link as the API returns it, with the URL it is served at (`create_link`, and each of `get_page`'s links). */
export const linkServed = (link: JsonSchema) => withFields(link, { url: ServedUrl });

/** `get_page`'s answer: the page as the API returns it, with its audiences and the links that lead to it. */
export const pageWithParts = (page: JsonSchema, audience: JsonSchema, link: JsonSchema) =>
  withFields(page, {
    audiences: Type.Array(Type.Unsafe<Record<string, unknown>>(audience), { description: 'Its live audiences, first 100' }),
    audiencesHasMore: Type.Boolean({ description: 'More audiences than listed: list them with the API' }),
    links: Type.Array(Type.Unsafe<Record<string, unknown>>(linkServed(link)), {
      description: 'Links to the page or its audiences, with their URLs, first 100 per domain',
    }),
    linksHasMore: Type.Boolean(),
  });
