import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ApiKeyAuth } from '../http/auth.js';
import { AppError } from '../http/errors.js';
import { injectedApi } from './api.js';
import type { RouteCatalogue } from './catalogue.js';
import { buildTools, type Tool } from './tools.js';
import type { PublicOrigin } from '../http/public-origin.js';

const CHALLENGE = { 'www-authenticate': 'Bearer realm="mcp"' };

/** At most this many JSON-RPC messages in one POST (the SDK would take 100). */
export const MAX_BATCH = 20;

/**
 * Messages whose work is /v0 requests, each metered as any API request (a refusal then reaches the
 * model as the tool's error): charging them at the door as well would count them twice.
 */
const METERED_BY_THE_API = new Set(['tools/call', 'resources/read', 'resources/list']);

/** What one POST costs at the door: one token per message the API does not meter itself. */
function doorCost(messages: unknown[]): number {
  let cost = 0;
  for (const m of messages) {
    const method = typeof m === 'object' && m !== null ? (m as { method?: unknown }).method : undefined;
    if (typeof method !== 'string' || !METERED_BY_THE_API.has(method)) cost++;
  }
  return cost;
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
  const caller = async (request: FastifyRequest) => {
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

  const noStream = async (request: FastifyRequest) => {
    await caller(request);
    throw new AppError(
      'method_not_allowed',
      'This server keeps no sessions and opens no server-to-client stream: send each message as a POST',
      undefined,
      { allow: 'POST' },
    );
  };

  app.get('/mcp', { schema: { hide: true } }, noStream);
  app.delete('/mcp', { schema: { hide: true } }, noStream);

  app.post('/mcp', { schema: { hide: true } }, async (request, reply) => {
    const { key, canWrite } = await caller(request);
    const messages = Array.isArray(request.body) ? request.body : [request.body];
    if (messages.length > MAX_BATCH) {
      // The SDK's own refusal of a batch too long, at this server's bound: a JSON-RPC error in a 400.
      return reply.code(400).send({
        jsonrpc: '2.0',
        error: { code: -32600, message: `Invalid Request: a batch holds at most ${MAX_BATCH} messages` },
        id: null,
      });
    }
    const cost = doorCost(messages);
    if (cost > 0) await keys.charge(key, cost, reply);
    const { mcpServer, fillToolLists, set, Transport } = await load();
    const server = mcpServer(set, catalogue, {
      api: injectedApi(app, key, request.raw, request.id),
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
