import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, type FieldError, pointerSegment } from './errors.js';

const MAX_JSON_DEPTH = 64;
const MAX_JSON_ITEMS = 10_000;

/**
 * The JSON body policy. Only application/json bodies are read (anything else is 415); an empty
 * body is no body, not an error. A body nested deeper than 64 levels, or with an array of more
 * than 10,000 items, a number beyond the double range or a NUL character, is refused before
 * anything else looks at it. An area may add a parser for another type on its own routes
 * (uploads do, for image bytes).
 */
export function registerJsonBody(app: FastifyInstance): void {
  const readJson = jsonReader(app);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => readJson(request, body.toString(), done));
}

/**
 * A form's field holding JSON, read under the same policy as a JSON body: what a browser posts
 * into a frame (the console's live preview), where no script can send JSON. Only in the
 * registering plugin's scope. A form without the field is a body without it: the schema says so.
 */
export function registerFormJsonBody(app: FastifyInstance, field: string): void {
  const readJson = jsonReader(app);
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (request, body, done) => {
    const text = new URLSearchParams(body.toString()).get(field);
    if (text === null) return done(null, {});
    readJson(request, text, done);
  });
}

type Done = (err: Error | null, body?: unknown) => void;

function jsonReader(app: FastifyInstance) {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  return (request: FastifyRequest, text: string, done: Done) => {
    if (text.length === 0) {
      done(null, undefined);
      return;
    }
    if (nestingDepth(text) > MAX_JSON_DEPTH) {
      done(
        new AppError('validation_failed', `The body is nested deeper than ${MAX_JSON_DEPTH} levels`, [
          { path: '', message: `must not nest deeper than ${MAX_JSON_DEPTH} levels` },
        ]),
      );
      return;
    }
    parseJson(request, text, (err, parsed) => {
      if (err) return done(prototypeKeyProblem(text) ?? err);
      const problem = bodyProblem(parsed);
      if (problem)
        return done(new AppError('validation_failed', `Invalid body: ${problem.path || 'the body'} ${problem.message}`, [problem]));
      done(null, mayHoldSurrogates(text) ? wellFormed(parsed) : parsed);
    });
  };
}

/** The deepest nesting of objects and arrays in JSON text, read without parsing it (strings skipped). */
function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) deepest = Math.max(deepest, ++depth);
    else if (c === 125 || c === 93) depth--;
  }
  return deepest;
}

/** Whether JSON text may hold a surrogate, escaped or not: only then are its strings looked at again. */
const mayHoldSurrogates = (text: string) => /\\u[dD][89a-fA-F]|[\ud800-\udfff]/.test(text);
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * The body with every lone surrogate in its string values replaced by U+FFFD, as the databases
 * would store it: a value is then answered as it was stored, and its length is the length the
 * schema checked (SQLite kept a lone surrogate as three bytes that read back as three characters).
 */
function wellFormed(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(LONE_SURROGATE, '\ufffd');
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = wellFormed(value[i]);
  } else if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    for (const k of Object.keys(record)) record[k] = wellFormed(record[k]);
  }
  return value;
}

/**
 * What no schema can say about a parsed body: an array longer than the limit, a number that
 * overflowed to Infinity (`1e400`), or a NUL character (PostgreSQL cannot store one, and it
 * means nothing in text) in any string or key. The first one found, at its JSON Pointer.
 */
function bodyProblem(value: unknown, path = ''): FieldError | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? { path, message: 'must not contain the NUL character' } : undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : { path, message: 'is too large a number' };
  if (Array.isArray(value)) {
    if (value.length > MAX_JSON_ITEMS) return { path, message: `must not hold more than ${MAX_JSON_ITEMS} items` };
    for (let i = 0; i < value.length; i++) {
      const found = bodyProblem(value[i], `${path}/${i}`);
      if (found) return found;
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const at = `${path}/${pointerSegment(k)}`;
      if (k.includes('\u0000')) return { path: at, message: 'must not contain the NUL character' };
      const found = bodyProblem(v, at);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * Why a body the JSON parser refused was refused, when it is valid JSON after all: then it was for
 * a key that could change an object's prototype (`__proto__`, or `constructor` holding
 * `prototype`), refused wherever it appears. Saying "not valid JSON" would send the client looking
 * for a syntax error that is not there. Undefined for text that is not JSON.
 */
function prototypeKeyProblem(text: string): AppError | undefined {
  let parsed: unknown;
  try {
    // JSON.parse defines `__proto__` as a plain own key, so reading the text again is harmless.
    parsed = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    return undefined;
  }
  const found = prototypeKey(parsed, '');
  if (!found) return undefined;
  return new AppError('validation_failed', `The body may not contain ${found.key} (at ${found.path})`, [
    { path: found.path, message: `is refused: ${found.key} could change the prototype of objects` },
  ]);
}

function prototypeKey(value: unknown, path: string): { key: string; path: string } | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  if (Object.hasOwn(value, '__proto__')) return { key: 'the key __proto__', path: `${path}/__proto__` };
  const entries = Object.entries(value);
  const ctor = entries.find(([k]) => k === 'constructor')?.[1];
  if (ctor !== null && typeof ctor === 'object' && Object.hasOwn(ctor, 'prototype')) {
    return { key: 'constructor.prototype', path: `${path}/constructor/prototype` };
  }
  for (const [k, v] of entries) {
    const found = prototypeKey(v, `${path}/${pointerSegment(k)}`);
    if (found) return found;
  }
  return undefined;
}
