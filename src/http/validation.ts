import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { isPhoneShaped } from '../phone.js';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

const common: Options = {
  allErrors: true, // name every offending field, not just the first
  removeAdditional: false, // unknown fields are an error, never silently dropped
  useDefaults: true,
  strict: false, // TypeBox annotations such as `examples` are not Ajv keywords
};

// Bodies are JSON: a string is never a number. Query strings and paths are text: "20" is a number.
const bodyAjv = addFormats(new Ajv({ ...common, coerceTypes: false }));
const textAjv = addFormats(new Ajv({ ...common, coerceTypes: true }));
// A phone number as people type it; the tenant's country decides the number (src/phone.ts).
for (const ajv of [bodyAjv, textAjv]) ajv.addFormat('phone', { type: 'string', validate: isPhoneShaped });

/** A JSON value checked as a request body would be (outside a route: the page agent's answers). */
export const compileJsonCheck = (schema: object): ValidateFunction => bodyAjv.compile(schema);

/** Compiled once per route at start-up; shared by every app in the process. */
export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  httpPart === 'body' ? bodyAjv.compile(schema as object) : noNul(plainNumbers(schema as SchemaShape, textAjv.compile(schema as object)));

type Validator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/**
 * A NUL character in a path or query value is refused like one in a body: PostgreSQL cannot store
 * it, and it means nothing in text. Checked before the schema, on every value (repeated query
 * parameters arrive as arrays).
 */
function noNul(validate: Validator): Validator {
  const check: Validator = (data) => {
    const values = (data ?? {}) as Record<string, unknown>;
    for (const name in values) {
      const value = values[name];
      if (
        typeof value === 'string'
          ? value.includes('\u0000')
          : Array.isArray(value) && value.some((v) => typeof v === 'string' && v.includes('\u0000'))
      ) {
        check.errors = [
          { instancePath: `/${name}`, schemaPath: '', keyword: 'nul', params: {}, message: 'must not contain the NUL character' },
        ];
        return false;
      }
    }
    const ok = validate(data);
    check.errors = validate.errors;
    return ok;
  };
  check.errors = null;
  return check;
}

type SchemaShape = { properties?: Record<string, { type?: unknown }> };
const PLAIN: Record<string, RegExp> = { integer: /^-?\d+$/, number: /^-?\d+(\.\d+)?$/ };

/**
 * Ajv coerces any text JavaScript reads as a number (`0x10`, `1e1`, ` 5`); a query or path number
 * must be written in plain decimal, so anything else is refused before coercion.
 */
function plainNumbers(schema: SchemaShape, validate: ValidateFunction): Validator {
  const numeric = Object.entries(schema.properties ?? {}).flatMap(([name, s]) => {
    const pattern = typeof s.type === 'string' ? PLAIN[s.type] : undefined;
    return pattern ? [{ name, type: s.type as string, pattern }] : [];
  });
  if (numeric.length === 0) return validate;
  const check = (data: unknown): boolean => {
    const values = (data ?? {}) as Record<string, unknown>;
    const errors: ErrorObject[] = numeric
      .filter(({ name, pattern }) => typeof values[name] === 'string' && !pattern.test(values[name]))
      .map(({ name, type }) => ({
        instancePath: `/${name}`,
        schemaPath: '',
        keyword: 'type',
        params: { type },
        message: `must be ${type === 'integer' ? 'an integer' : 'a number'} in plain decimal`,
      }));
    if (errors.length > 0) {
      check.errors = errors;
      return false;
    }
    const ok = validate(data);
    check.errors = validate.errors;
    return ok;
  };
  check.errors = null as ErrorObject[] | null | undefined;
  return check;
}
