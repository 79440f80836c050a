import type { FastifyRequest } from 'fastify';
import Negotiator from 'negotiator';

/**
 * The media type, of those a route can answer (its default first), that the request's `Accept`
 * prefers (RFC 9110 quality values and wildcards, by `negotiator`). A request that accepts none
 * of them gets the default: an API answers rather than refusing with 406.
 */
export function preferredType<T extends string>(request: FastifyRequest, types: readonly [T, ...T[]]): T {
  const chosen = new Negotiator({ headers: { accept: request.headers.accept } }).mediaType([...types]);
  return types.find((t) => t === chosen) ?? types[0];
}
