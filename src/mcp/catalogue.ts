import type { RouteOptions } from 'fastify';

/** What the MCP tools need of one API operation: where it is, and the schemas its route declared. */
export interface Operation {
  operationId: string;
  method: string;
  /** Fastify's template, e.g. `/v0/pages/:page_id`. */
  url: string;
  params?: object;
  querystring?: object;
  body?: object;
  /** The success answer's schema (200, 201 or 202). */
  response?: object;
}

export interface RouteCatalogue {
  /** The `onRoute` hook that fills the catalogue; app.ts adds it before any area's routes. */
  hook(route: RouteOptions): void;
  get(operationId: string): Operation;
  /** An operation that may not exist (yet): a tool that prefers it falls back to another. */
  find(operationId: string): Operation | undefined;
}

interface RouteSchema {
  operationId?: string;
  params?: object;
  querystring?: object;
  body?: object;
  response?: Record<string, object>;
}

/** A response declared by media type (JSON or CSV, say) answers the tools in JSON. */
function jsonOf(response: object | undefined): object | undefined {
  const byType = (response as { content?: Record<string, { schema?: object }> } | undefined)?.content;
  return byType ? byType['application/json']?.schema : response;
}

/**
 * The operations of the /v0 API as their routes declared them, by operationId: the MCP tools take
 * their input and output schemas from here, so no schema is written twice.
 */
export function routeCatalogue(): RouteCatalogue {
  const operations = new Map<string, Operation>();
  return {
    hook(route) {
      const schema = route.schema as RouteSchema | undefined;
      if (!schema?.operationId || !route.url.startsWith('/v0/')) return;
      const method = [route.method].flat()[0] ?? 'GET';
      if (method === 'HEAD') return;
      operations.set(schema.operationId, {
        operationId: schema.operationId,
        method,
        url: route.url,
        params: schema.params,
        querystring: schema.querystring,
        body: schema.body,
        response: jsonOf(schema.response?.['200'] ?? schema.response?.['201'] ?? schema.response?.['202']),
      });
    },
    find: (operationId) => operations.get(operationId),
    get(operationId) {
      const found = operations.get(operationId);
      // A programming error (an operation renamed): start-up fails rather than a tool going missing.
      if (!found) throw new Error(`No API operation ${operationId} for the MCP tools`);
      return found;
    },
  };
}
