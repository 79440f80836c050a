import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { SiteHost, SiteHosts } from './hosts.js';

const hostOfRequest = new WeakMap<object, SiteHost>();

/** The tenant domain a site request came to (set by the dispatcher before the site sees it). */
export function siteHostOf(request: FastifyRequest): SiteHost {
  const host = hostOfRequest.get(request.raw);
  if (!host) throw new Error('A site request always comes through the dispatcher');
  return host;
}

/**
 * The first hook of the API app: a request whose Host is a tenant domain is the visitor plane's,
 * whatever its path. It is handed whole (its body not yet read) to the site's own Fastify
 * instance, so API routes never answer on a tenant domain, and the site's paths exist only there,
 * never on the API's host.
 */
export function dispatchTenantHosts(hosts: SiteHosts, site: FastifyInstance): onRequestAsyncHookHandler {
  return async (request, reply) => {
    const host = await hosts.lookup(request.headers.host);
    if (!host) return;
    hostOfRequest.set(request.raw, host);
    reply.hijack();
    site.routing(request.raw, reply.raw);
  };
}
