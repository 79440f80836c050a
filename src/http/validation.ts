import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

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

/** Compiled once per route at start-up; shared by every app in the process. */
export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object);
