import type { FastifyInstance } from 'fastify';
import type { Arrival } from '../http/public-origin.js';
import type { Operation } from './catalogue.js';
import { argumentName, plainSchema } from './schemas.js';

/** One request of the /v0 API, made with the caller's key. */
export interface ApiRequest {
  method: string;
  /** The path with its parameters filled in, without the query. */
  path: string;
  query?: Record<string, unknown>;
  body?: unknown;
  idempotencyKey?: string;
}

export interface ApiAnswer {
  status: number;
  contentType: string;
  text: string;
}

export type Api = (request: ApiRequest) => Promise<ApiAnswer>;

/**
 * The API refused a tool's request: the tool answers an error whose text is the problem's detail
 * and the pointer of each offending field, so the model can correct its arguments.
 */
export class ToolProblem extends Error {}

interface ProblemBody {
  detail?: string;
  requestId?: string;
  title?: string;
  errors?: { path: string; message: string }[];
}

function problemText(answer: ApiAnswer): string {
  let problem: ProblemBody = {};
  try {
    problem = JSON.parse(answer.text) as ProblemBody;
  } catch {
    // not a problem document: the status says what happened
  }
  const detail = problem.detail ?? problem.title ?? `The API answered ${answer.status}`;
  const fields = (problem.errors ?? []).map((e) => `field ${e.path || '/'}: ${e.message}`);
  // A failure of the service is reported by its request id; a refusal needs none.
  const failed = answer.status >= 500 && problem.requestId ? [`requestId: ${problem.requestId}`] : [];
  return [detail, ...fields, ...failed].join('\n');
}

/** The answer's JSON, or a ToolProblem for any answer other than 2xx. */
export async function callJson<T>(api: Api, request: ApiRequest): Promise<T> {
  const answer = await api(request);
  if (answer.status < 200 || answer.status >= 300) throw new ToolProblem(problemText(answer));
  return JSON.parse(answer.text) as T;
}

/** The answer's text (an HTML document), or a ToolProblem for any answer other than 2xx. */
export async function callText(api: Api, request: ApiRequest): Promise<string> {
  const answer = await api(request);
  if (answer.status < 200 || answer.status >= 300) throw new ToolProblem(problemText(answer));
  return answer.text;
}

const namesOf = (schema: object | undefined) => Object.keys(plainSchema(schema).properties ?? {});

/**
 * A tool's arguments as a request of one operation: its path parameters into the path, its query's
 * names into the query, `idempotencyKey` into the header, and every other argument into the body
 * (so an unknown one meets the body schema's refusal, which names it).
 */
export function requestOf(operation: Operation, args: Record<string, unknown>, fixed: Record<string, unknown> = {}): ApiRequest {
  // A path parameter's argument is named as the API's JSON names it (`pageId` for `page_id`).
  const params = new Map(namesOf(operation.params).map((name) => [argumentName(name), name]));
  const query = new Set(namesOf(operation.querystring));
  let path = operation.url;
  const queryValues: Record<string, unknown> = {};
  const body: Record<string, unknown> = {};
  let idempotencyKey: string | undefined;
  for (const [name, value] of Object.entries({ ...args, ...fixed })) {
    if (value === undefined) continue;
    if (name === 'idempotencyKey' && typeof value === 'string') idempotencyKey = value;
    else if (params.has(name)) path = path.replace(`:${params.get(name)}`, encodeURIComponent(String(value)));
    else if (query.has(name) || operation.body === undefined) queryValues[name] = value;
    else body[name] = value;
  }
  const request: ApiRequest = { method: operation.method, path, query: queryValues };
  if (operation.body !== undefined) request.body = body;
  if (idempotencyKey !== undefined) request.idempotencyKey = idempotencyKey;
  return request;
}

export function queryString(query: Record<string, unknown> | undefined): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    for (const one of [value].flat()) if (one !== undefined && one !== null) search.append(name, String(one));
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

/**
 * The API of this process, entered by the same door as any request (`app.inject`), with the
 * caller's key: its scopes, rate limit, idempotency and validation apply unchanged. Each request
 * arrives as the MCP request did (its Host, address and `X-Forwarded-Proto`), so the addresses the
 * API makes (http/public-origin.ts) are the ones the caller reaches.
 */
/**
 * Tokens the door already took for API work (one per `tools/call` or `resources/*` message of the
 * POST): each API request spends one while any are left, and is metered by the API once none are.
 */
export interface Prepaid {
  header: string;
  value: string;
  credits: number;
}

export function injectedApi(app: FastifyInstance, key: string, outer: Arrival, requestId: string, prepaid?: Prepaid): Api {
  const { host, 'x-forwarded-proto': proto } = outer.headers;
  const remoteAddress = outer.socket.remoteAddress;
  return async ({ method, path, query, body, idempotencyKey }) => {
    // The MCP request's id on each API request it makes, so the logs join them.
    const headers: Record<string, string | string[]> = { 'x-api-key': key, 'x-request-id': requestId };
    if (host) headers.host = host;
    if (proto !== undefined) headers['x-forwarded-proto'] = proto;
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (prepaid && prepaid.credits > 0) {
      prepaid.credits--;
      headers[prepaid.header] = prepaid.value;
    }
    const res = await app.inject({
      method: method as 'GET',
      url: `${path}${queryString(query)}`,
      headers,
      ...(remoteAddress !== undefined ? { remoteAddress } : {}),
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
    return { status: res.statusCode, contentType: String(res.headers['content-type'] ?? ''), text: res.body };
  };
}
