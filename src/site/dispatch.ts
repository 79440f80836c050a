import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { SiteHost, SiteHosts } from './hosts.js';

const hostOfRequest = new WeakMap<object, SiteHost>();

/** The tenant domain a site request came to (set by the dispatcher before the site sees it). */
export function siteHostOf(request: FastifyRequest): SiteHost {
  const host = hostOfRequest.get(request.raw);
  if (!host) throw new Error('A site request always comes through the dispatcher');
  return host;
}

/**
 * Hands a request whose Host is a tenant domain, whatever its path, whole (its body not yet read)
 * to the site's own Fastify instance, so API routes never answer on a tenant domain, and the site's
 * paths exist only there, never on the API's host. True when it was handed over.
 */
export function handOverTenantHosts(hosts: SiteHosts, site: FastifyInstance) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<boolean> => {
    const host = await hosts.lookup(request.headers.host);
    if (!host) return false;
    hostOfRequest.set(request.raw, host);
    reply.hijack();
    site.routing(request.raw, reply.raw);
    return true;
  };
}

/** The first hook of the API app: the hand-over above, before anything of the API runs. */
export function dispatchTenantHosts(hosts: SiteHosts, site: FastifyInstance): onRequestAsyncHookHandler {
  const handOver = handOverTenantHosts(hosts, site);
  return async (request, reply) => {
    await handOver(request, reply);
  };
}

/**
 * The same hand-over at the server's door, for hosts already known to be tenant domains: a
 * visitor request then skips the API app's request lifecycle altogether (the hook above still
 * takes the first request of a host, and requests that do not come through a socket, such as
 * `inject`). Installed once the app is ready, around Fastify's own request listener.
 */
export function frontDoor(server: Server, hosts: SiteHosts, site: FastifyInstance): void {
  const [api, ...others] = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  if (!api || others.length > 0) return;
  server.removeListener('request', api);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const host = hosts.peek(req.headers.host);
    if (!host) return api(req, res);
    hostOfRequest.set(req, host);
    site.routing(req, res);
  });
}
