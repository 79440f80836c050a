import type { FastifySchema } from 'fastify';

/**
 * Named schemas in the OpenAPI document. Every schema with an `$id` (each resource, list envelope,
 * request body and the problem) is declared once under `components.schemas` by that name, and the
 * operations point at it with `$ref`. Only the document changes: validation and serialization keep
 * compiling the routes' own schemas, so they answer exactly as before.
 */

type Json = Record<string, unknown>;
const COMPONENTS = '#/components/schemas/';
/** Keywords whose values are data, never schemas: an `$id` in them is not a name. */
const DATA_KEYWORDS = new Set(['default', 'examples', 'enum', 'const']);

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const nameOf = (value: unknown): string | undefined => (isObject(value) && typeof value.$id === 'string' ? value.$id : undefined);

export interface Components {
  /** The route's schema as the document shows it: its body and responses refer to named schemas. */
  route(schema: FastifySchema): FastifySchema;
  /** Every named schema met so far, each with the named schemas it contains referred to. */
  schemas(): Record<string, Json>;
}

/** Collects the named schemas of the routes, for one generation of the document. */
export function components(): Components {
  const named = new Map<string, Json>();

  const refer = (node: unknown): unknown => {
    const name = nameOf(node);
    if (name !== undefined) {
      remember(name, node as Json);
      return { $ref: COMPONENTS + name };
    }
    return within(node);
  };
  const within = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(refer);
    if (!isObject(node)) return node;
    return Object.fromEntries(
      Object.entries(discriminated(node)).map(([key, value]) => [key, DATA_KEYWORDS.has(key) ? value : refer(value)]),
    );
  };
  const remember = (name: string, schema: Json) => {
    const known = named.get(name);
    if (known === undefined) named.set(name, schema);
    else if (known !== schema && JSON.stringify(known) !== JSON.stringify(schema))
      throw new Error(`Two different schemas are named ${name}: give one of them another $id`);
  };

  /** A response keeps its description beside the reference (the document takes it from there). */
  const response = (value: unknown): unknown => {
    const name = nameOf(value);
    if (name === undefined) return within(value);
    const description = (value as Json).description;
    return { ...(refer(value) as Json), ...(typeof description === 'string' ? { description } : {}) };
  };

  return {
    route(schema) {
      const responses = schema.response as Json | undefined;
      return {
        ...schema,
        ...(schema.body === undefined ? {} : { body: refer(schema.body) }),
        ...(responses === undefined
          ? {}
          : { response: Object.fromEntries(Object.entries(responses).map(([status, r]) => [status, response(r)])) }),
      };
    },
    schemas() {
      const out: Record<string, Json> = {};
      // A schema's own named parts are remembered while it is read, so the map grows as it is walked.
      for (const [name, schema] of named) {
        const { $id: _id, ...rest } = schema;
        out[name] = openApiSchema(within(rest)) as Json;
      }
      return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
    },
  };
}

/**
 * A union discriminated by a property gets its `mapping`: each value of the property on the wire,
 * to the named branch that holds it. Without one, a generated client or a validator that goes by
 * the discriminator cannot tell which schema a value names (the names of the branches are not the
 * values). It is written `oneOf` too, as those tools require (the values tell the branches apart,
 * so exactly one matches). Taken from the branches themselves, so it cannot disagree with them.
 */
function discriminated(node: Json): Json {
  const { discriminator, anyOf, ...rest } = node;
  if (!isObject(discriminator) || typeof discriminator.propertyName !== 'string') return node;
  const property = discriminator.propertyName;
  const branches = anyOf ?? node.oneOf;
  if (!Array.isArray(branches)) throw new Error(`A union discriminated by ${property} has no branches`);
  const mapping: Record<string, string> = {};
  for (const branch of branches) {
    const name = nameOf(branch);
    const properties = isObject(branch) ? branch.properties : undefined;
    const value = isObject(properties) && isObject(properties[property]) ? properties[property].const : undefined;
    if (name === undefined || typeof value !== 'string' || value in mapping) {
      throw new Error(`Each branch of a union discriminated by ${property} needs an $id and a value of its own for ${property}`);
    }
    mapping[value] = COMPONENTS + name;
  }
  return { ...rest, oneOf: branches, discriminator: { ...discriminator, mapping } };
}

/** As @fastify/swagger writes the routes' schemas: `const` as a one-value `enum` (Swagger UI reads no `const`). */
function openApiSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(openApiSchema);
  if (!isObject(node)) return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'const') out.enum = [value];
    else out[key] = DATA_KEYWORDS.has(key) ? value : openApiSchema(value);
  }
  return out;
}

/**
 * @fastify/swagger marks every request body required; a body whose schema also admits `null`
 * (an action's `EmptyBody`, `ApiKeyCreate`...) may be left out, and the document says so.
 */
export function optionalNullableBodies(paths: Record<string, Record<string, unknown>>, schemas: Record<string, Json>): void {
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      if (!isObject(operation) || !isObject(operation.requestBody)) continue;
      const body = operation.requestBody as { required?: boolean; content?: Record<string, { schema?: Json }> };
      const schema = body.content?.['application/json']?.schema;
      const ref = typeof schema?.$ref === 'string' ? schema.$ref : '';
      const named = ref.startsWith(COMPONENTS) ? schemas[ref.slice(COMPONENTS.length)] : schema;
      if (Array.isArray(named?.type) && named.type.includes('null')) body.required = false;
    }
  }
}
