import type { FastifyReply, FastifyRequest } from 'fastify';
import { FONT_FILES } from '../../render/index.js';
import { notModified } from '../context.js';
import { notFoundPage } from '../pages.js';

/**
 * `GET /_pam/fonts/<name>` on a tenant domain: a brand font's file (src/render/fonts.ts), whose
 * name holds a hash of its bytes, so it is cached for a year and never revalidated. Every tenant's
 * domain serves every family: nothing about a tenant is in a font.
 */
export function sendFont(request: FastifyRequest<{ Params: { name: string } }>, reply: FastifyReply) {
  const file = FONT_FILES.get(request.params.name);
  if (!file) return reply.code(404).type('text/html; charset=utf-8').send(notFoundPage());
  reply
    .header('cache-control', 'public, max-age=31536000, immutable')
    .header('etag', file.etag)
    .header('content-security-policy', "default-src 'none'");
  if (notModified(request, file.etag)) return reply.code(304).send();
  return reply.type('font/woff2').send(file.bytes);
}
