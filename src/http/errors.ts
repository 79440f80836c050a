import type { Static } from '@sinclair/typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isUnavailable, isUniqueViolation } from '../db/errors.js';
import type { FieldErrorSchema, ProblemSchema } from './schemas.js';

/** Every error code the API answers with, and its HTTP status. Codes are stable: clients branch on them. */
export const ERROR_STATUS = {
  validation_failed: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  idempotency_key_in_progress: 409,
  domain_not_verified: 409,
  nothing_to_restore: 409,
  secret_not_configured: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
} as const;
export type ErrorCode = keyof typeof ERROR_STATUS;

const TITLES: Record<ErrorCode, string> = {
  validation_failed: 'The request is invalid',
  unauthorized: 'Authentication is required',
  forbidden: 'The credential does not allow this',
  not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  conflict: 'The request conflicts with the current state',
  idempotency_key_in_progress: 'A request with this idempotency key is in progress',
  domain_not_verified: 'The domain could not be verified',
  nothing_to_restore: 'The version has no content to restore',
  secret_not_configured: 'No key is configured to store this secret encrypted',
  payload_too_large: 'The request body is too large',
  unsupported_media_type: 'Unsupported media type',
  idempotency_key_reused: 'The idempotency key was used with a different request',
  rate_limited: 'Too many requests',
  internal: 'Internal server error',
  unavailable: 'The service is unavailable',
};

export type FieldError = Static<typeof FieldErrorSchema>;

/** The one error type services throw; the error handler turns it into problem+json. */
export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly errors?: FieldError[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
  }
}

export const notFound = (what: string) => new AppError('not_found', `${what} not found`);
export const conflict = (detail: string) => new AppError('conflict', detail);
/** A 400 naming one field, for rules a schema cannot express (a reference to nothing, ...). */
export const invalidField = (path: string, message: string) => new AppError('validation_failed', `${path} ${message}`, [{ path, message }]);

/**
 * Runs a write that a unique rule guards on a client's value (a domain, a path): the database, not
 * a read before the write, decides who holds the value, so a race has one winner. Its refusal is
 * 409 naming the field; a unique violation nowhere expected is a lost race (see toAppError).
 */
export async function conflictIfTaken<T>(write: Promise<T>, taken: FieldError & { detail: string }): Promise<T> {
  try {
    return await write;
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    throw new AppError('conflict', taken.detail, [{ path: taken.path, message: taken.message }]);
  }
}

/** The body every error answers with; its `code` is one of the ErrorCodes. */
export type Problem = Static<typeof ProblemSchema> & { code: ErrorCode };

export function problemOf(err: AppError, requestId: string): Problem {
  const problem: Problem = {
    type: `urn:problem-type:${err.code}`,
    title: TITLES[err.code],
    status: err.status,
    detail: err.message,
    code: err.code,
    requestId,
  };
  if (err.errors) problem.errors = err.errors;
  return problem;
}

// Fastify's own errors, by their stable code: what each means for the client.
const FASTIFY_CODES: Record<string, { code: ErrorCode; detail: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'unsupported_media_type', detail: 'The body must be sent as Content-Type: application/json' },
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'payload_too_large', detail: 'The request body exceeds the size limit' },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'validation_failed', detail: 'The body is not valid JSON' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'validation_failed', detail: 'The body is empty' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: 'validation_failed', detail: 'Content-Length does not match the body' },
  FST_ERR_CTP_INVALID_PARSE_TYPE: { code: 'unsupported_media_type', detail: 'The body cannot be read with this Content-Type' },
  FST_ERR_BAD_URL: { code: 'validation_failed', detail: 'The URL is not validly percent-encoded' },
  // An id longer than any id names nothing, like any other malformed id.
  FST_ERR_MAX_PARAM_LENGTH: { code: 'not_found', detail: 'Not found' },
};

// Statuses other libraries (body parsers, plugins) set on their errors.
const STATUS_CODES: Record<number, ErrorCode> = {
  400: 'validation_failed',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  503: 'unavailable',
};

interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

// Formats whose failure is said in words rather than by the format's name.
const FORMAT_MESSAGES: Record<string, string> = {
  phone: 'is not a phone number: write it like +14155550100, or (415) 555-0100 with defaultCountry set',
};

/** Ajv errors → one entry per offending field, each at its own JSON Pointer. */
export function fieldErrors(validation: readonly AjvError[]): FieldError[] {
  const byPath = new Map<string, string[]>();
  for (const e of validation) {
    let path = e.instancePath;
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required') {
      path += `/${pointerSegment(String(e.params.missingProperty))}`;
      message = 'is required';
    } else if (e.keyword === 'additionalProperties') {
      path += `/${pointerSegment(String(e.params.additionalProperty))}`;
      message = 'is not an allowed field';
    } else if (e.keyword === 'enum' && Array.isArray(e.params.allowedValues)) {
      message = `must be one of: ${e.params.allowedValues.join(', ')}`;
    } else if (e.keyword === 'format' && typeof e.params.format === 'string' && e.params.format in FORMAT_MESSAGES) {
      message = FORMAT_MESSAGES[e.params.format] ?? message;
    } else if (e.keyword === 'anyOf' || e.keyword === 'oneOf') {
      continue; // its branches have already said what is wrong
    }
    const messages = byPath.get(path) ?? [];
    if (!messages.includes(message)) messages.push(message);
    byPath.set(path, messages);
  }
  return [...byPath].map(([path, messages]) => ({ path, message: messages.join('; ') }));
}

/** A key as one segment of a JSON Pointer (RFC 6901): `~` and `/` escaped. */
export function pointerSegment(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Any thrown value → the AppError that answers it. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = err as Partial<FastifyError> & { validation?: AjvError[]; validationContext?: string };
  if (Array.isArray(e.validation)) {
    const errors = fieldErrors(e.validation);
    const where = e.validationContext === 'querystring' ? 'query' : (e.validationContext ?? 'request');
    const summary = errors.map((f) => `${f.path || where} ${f.message}`).join('; ');
    return new AppError('validation_failed', `Invalid ${where}: ${summary}`, errors);
  }
  if (isUnavailable(err)) {
    return new AppError('unavailable', 'The database is unavailable; retry shortly', undefined, { 'retry-after': '5' });
  }
  // A uniqueness rule the service did not expect to hit: a concurrent request won the race.
  if (isUniqueViolation(err)) return new AppError('conflict', 'A concurrent request changed the same data; retry the request');
  const known = typeof e.code === 'string' ? FASTIFY_CODES[e.code] : undefined;
  if (known) return new AppError(known.code, known.detail);
  const status = typeof e.statusCode === 'number' ? e.statusCode : 500;
  const code = STATUS_CODES[status];
  if (code) return new AppError(code, TITLES[code]);
  return new AppError('internal', 'An unexpected error occurred; quote the requestId when reporting it');
}

export function sendProblem(reply: FastifyReply, request: FastifyRequest, err: AppError): FastifyReply {
  if (err.headers) reply.headers(err.headers);
  return reply.code(err.status).type('application/problem+json').send(problemOf(err, request.id));
}
