import type { FastifyReply, FastifyRequest } from 'fastify';
import { attr } from '../../render/index.js';
import { notModified, type SiteContext } from '../context.js';
import type { Servable } from './documents.js';

/** A kept query is at most this long: a longer one is left out of the form's path (the path still works). */
const MAX_KEPT_QUERY = 2048;

/**
 * The query a visitor's URL had, as the lead form keeps it (`?a=b&c=d`, or ''): re-encoded, so
 * that it is safe in a Location header, without the thank-you's own `submitted` marker.
 */
export function keptQuery(search: string): string {
  const params = new URLSearchParams(search);
  params.delete('submitted');
  const kept = params.toString();
  return kept === '' || kept.length > MAX_KEPT_QUERY ? '' : `?${kept}`;
}

/** The query part of a request URL (after the first `?`), raw. */
export const searchOf = (rawUrl: string): string => {
  const at = rawUrl.indexOf('?');
  return at === -1 ? '' : rawUrl.slice(at + 1);
};

/** The path part of a request URL, decoded; undefined when it does not decode (404). */
export function pathOf(rawUrl: string): string | undefined {
  const raw = rawUrl.split('?', 1)[0] ?? '/';
  try {
    const path = decodeURIComponent(raw);
    // No link's path holds a NUL (the API refuses one), and PostgreSQL cannot even compare it.
    return path.includes('\u0000') ? undefined : path;
  } catch {
    return undefined;
  }
}

/**
 * Sends a document: 304 when the visitor has it, else its bytes with a fresh view token in its
 * slots, and `query` (`?a=b`, or '') where the URL's query goes (the lead form's path). `query` is
 * a thunk: only a document with a form has that slot, and re-encoding a visitor's query costs more
 * than the rest of a remembered answer's way out.
 */
export function sendDocument(
  request: FastifyRequest,
  reply: FastifyReply,
  context: SiteContext,
  served: Servable,
  query: () => string,
  status = 200,
  token?: string,
) {
  const { rendered } = served;
  // A URL whose document depends on the visitor (a segment, a visit token) is never kept by a shared
  // cache; a browser still revalidates it by its ETag, which differs per variant.
  reply
    .header('cache-control', served.varies ? 'private, no-cache' : 'no-cache')
    .header('etag', rendered.etag)
    .header('content-security-policy', rendered.policy);
  if (rendered.robots) reply.header('x-robots-tag', rendered.robots);
  if (status === 200 && notModified(request, rendered.etag)) return reply.code(304).send();
  const { parts, slots } = rendered;
  let body = parts[0] ?? '';
  if (slots.length > 0) {
    const value = token ?? context.tokens.sign(served.visit, undefined, served.unit).token;
    const kept = slots.includes('query') ? attr(query()) : '';
    for (let i = 0; i < slots.length; i++) body += (slots[i] === 'query' ? kept : value) + (parts[i + 1] ?? '');
  }
  return reply.code(status).type('text/html; charset=utf-8').send(body);
}
