import type { onRequestAsyncHookHandler, onResponseHookHandler, onRouteHookHandler } from 'fastify';
import { NoQuery } from './schemas.js';

/**
 * The route rules: app.ts applies them to every route an area declares, by its path and method,
 * so that no routes.ts has to restate them (and none can forget them). Before writing a route:
 *
 * - `requireApiKey`: every route under /v0/ needs an API key (http/auth.ts), checked before
 *   anything else of the route runs. Other routes (signed downloads, admin, health, docs) do not.
 * - `refuseUnknownQueryParameters`: a /v0/ or /admin/ route whose schema declares no querystring
 *   takes none: any query parameter is 400, never silently ignored. The OpenAPI document shows
 *   such a route as taking no parameters. A route that takes some declares its querystring.
 * - `wakeAfterWrites`: every route that may write (any method but GET, HEAD and OPTIONS) wakes a
 *   background worker of this process once it has answered, since the change may have left it
 *   work: the webhook dispatcher (events emitted) and the page agent (versions queued), each only
 *   where it runs. Reads never pay for it.
 *
 * Each applies to the routes declared after app.ts adds it, which is before any area's.
 */

export function requireApiKey(check: onRequestAsyncHookHandler): onRouteHookHandler {
  return (route) => {
    if (/^\/v0\//.test(route.url)) route.onRequest = [check, ...[route.onRequest ?? []].flat()];
  };
}

export const refuseUnknownQueryParameters: onRouteHookHandler = (route) => {
  if (/^\/(v0|admin)\//.test(route.url) && route.schema && !route.schema.querystring) {
    route.schema = { ...route.schema, querystring: NoQuery };
  }
};

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function wakeAfterWrites(worker: { wake(): void }): onRouteHookHandler {
  const wake: onResponseHookHandler = (_request, _reply, done) => {
    worker.wake();
    done();
  };
  return (route) => {
    if ([route.method].flat().some((m) => !READS.has(m))) route.onResponse = [wake, ...[route.onResponse ?? []].flat()];
  };
}
