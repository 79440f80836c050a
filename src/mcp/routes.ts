import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKeyAuth } from '../http/auth.js';
import { AppError } from '../http/errors.js';
import { injectedApi, type Prepaid } from './api.js';
import type { RouteCatalogue } from './catalogue.js';
import { buildTools, type Tool } from './tools.js';
import type { PublicOrigin } from '../http/public-origin.js';

const CHALLENGE = { 'www-authenticate': 'Bearer realm="mcp"' };

/** At most this many JSON-RPC messages in one POST (the SDK would take 100). */
export const MAX_BATCH = 20;

/**
 * Messages whose work may be /v0 requests: the token each takes at the door pays for one API
 * request of the POST (see Prepaid), so a tool that answers from one request costs one token.
 */
const API_WORK = new Set(['tools/call', 'resources/read', 'resources/list']);

function apiWork(messages: unknown[]): number {
  let n = 0;
  for (const m of messages) {
    const method = typeof m === 'object' && m !== null ? (m as { method?: unknown }).method : undefined;
    if (typeof method === 'string' && API_WORK.has(method)) n++;
  }
  return n;
}

/** The key as MCP clients send it (`Authorization: Bearer`), or as the API takes it (`x-api-key`). */
function keyOf(request: FastifyRequest): string | undefined {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
  if (bearer) return bearer[1];
  const key = request.headers['x-api-key'];
  return typeof key === 'string' && key !== '' ? key : undefined;
}

/** The Fastify request as the fetch API's Request that the SDK's transport reads (its body already parsed). */
function webRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    for (const one of [value].flat()) if (one !== undefined) headers.append(name, String(one));
  }
  return new Request(`http://${request.headers.host ?? 'localhost'}${request.url}`, { method: request.method, headers });
}

async function loadProtocol(tools: Tool[]) {
  const [{ mcpServer, toolSet, fillToolLists }, { WebStandardStreamableHTTPServerTransport }] = await Promise.all([
    import('./server.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
  ]);
  return { mcpServer, fillToolLists, set: toolSet(tools), Transport: WebStandardStreamableHTTPServerTransport };
}
type Loaded = Awaited<ReturnType<typeof loadProtocol>>;

/**
 * Streamable HTTP (MCP 2025-11-25) at /mcp, stateless: no `Mcp-Session-Id` is issued, every POST
 * carries the caller's key and is answered in full (JSON, no SSE stream), so any instance answers
 * any request. GET (a server-to-client stream) and DELETE (ending a session) are 405, as the
 * specification allows a server without sessions or streams. Each tool calls the /v0 API of this
 * process with the caller's key, so its scopes, rate limit and idempotency apply as to any request.
 */
export const mcpRoutes: FastifyPluginAsync<{ catalogue: RouteCatalogue; keys: ApiKeyAuth; origin: PublicOrigin }> = async (
  app,
  { catalogue, keys, origin },
) => {
  // Built now, so a renamed operation fails start-up; the SDK itself (some 0.5 s to load) is loaded
  // by the first MCP request, not by every process start.
  const tools = buildTools(catalogue);
  let loading: Promise<Loaded> | undefined;
  const load = () => {
    loading ??= loadProtocol(tools);
    return loading;
  };

  // The specification's guard against DNS rebinding: a browser's Origin must be one the operator
  // allows (CORS_ORIGINS) or the service's own; clients outside a browser send none.
  const origins = new Set([...app.config.corsOrigins, new URL(app.config.publicBaseUrl).origin]);
  const callers = new WeakMap<FastifyRequest, { key: string; canWrite: boolean }>();
  const identify = async (request: FastifyRequest) => {
    const origin = request.headers.origin;
    if (origin !== undefined && !origins.has(origin)) {
      throw new AppError('forbidden', `Origin ${origin} may not use this MCP endpoint: allow it with CORS_ORIGINS`);
    }
    const key = keyOf(request);
    try {
      const found = await keys.identify(key);
      return { key: key ?? '', canWrite: found.scopes.includes('write') };
    } catch (err) {
      if (err instanceof AppError && err.code === 'unauthorized') {
        throw new AppError('unauthorized', `${err.message}: send it as Authorization: Bearer <key> (or x-api-key)`, undefined, CHALLENGE);
      }
      throw err;
    }
  };

  /**
   * Every request to /mcp with a live key takes one token as it arrives, whatever its body (a
   * malformed one included), so every answer carries the RateLimit headers; the handler charges a
   * batch's further messages before any of them runs.
   */
  const door = async (request: FastifyRequest, reply: FastifyReply) => {
    const found = await identify(request);
    await keys.charge(found.key, 1, reply);
    callers.set(request, found);
  };
  const caller = (request: FastifyRequest) => {
    const found = callers.get(request);
    if (!found) throw new Error('/mcp answered without its door');
    return found;
  };

  const noStream = async () => {
    throw new AppError(
      'method_not_allowed',
      'This server keeps no sessions and opens no server-to-client stream: send each message as a POST',
      undefined,
      { allow: 'POST' },
    );
  };

  app.get('/mcp', { schema: { hide: true }, onRequest: door }, noStream);
  app.delete('/mcp', { schema: { hide: true }, onRequest: door }, noStream);

  app.post('/mcp', { schema: { hide: true }, onRequest: door }, async (request, reply) => {
    const { key, canWrite } = caller(request);
    const messages = Array.isArray(request.body) ? request.body : [request.body];
    if (messages.length > MAX_BATCH) {
      // The SDK's own refusal of a batch too long, at this server's bound: a JSON-RPC error in a 400.
      return reply.code(400).send({
        jsonrpc: '2.0',
        error: { code: -32600, message: `Invalid Request: a batch holds at most ${MAX_BATCH} messages` },
        id: null,
      });
    }
    // Every message is charged before any runs: the door took one token, the rest are taken here
    // at once, and when the bucket holds fewer the whole POST is the API's 429 and nothing in it runs.
    if (messages.length > 1) await keys.charge(key, messages.length - 1, reply);
    const prepaid: Prepaid = { ...keys.prepaid, credits: apiWork(messages) };
    const { mcpServer, fillToolLists, set, Transport } = await load();
    const server = mcpServer(set, catalogue, {
      api: injectedApi(app, key, request.raw, request.id, prepaid),
      canWrite,
      originOf: (hostname) => origin(hostname, request.raw),
    });
    const transport = new Transport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      const answer = await transport.handleRequest(webRequest(request), { parsedBody: request.body });
      reply.code(answer.status);
      answer.headers.forEach((value, name) => {
        reply.header(name, value);
      });
      const text = fillToolLists(await answer.text(), set);
      return reply.send(text === '' ? undefined : text);
    } finally {
      await server.close();
    }
  });
};
