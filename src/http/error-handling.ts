import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiKeyAuth } from './auth.js';
import { AppError, sendProblem, toAppError } from './errors.js';

/** Every error, from any layer, leaves as problem+json; 405 is told apart from 404 by the route table. */
export function registerErrorHandling(app: FastifyInstance, keys: ApiKeyAuth): void {
  // On every answer: its request id; no MIME sniffing; API answers are never cached (downloads set
  // their own cache-control later, which replaces this one).
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id).header('x-content-type-options', 'nosniff');
    if (!request.url.startsWith('/docs')) reply.header('cache-control', 'no-store');
    done();
  });

  app.setErrorHandler((err, request, reply) => {
    const appError = bodyTooLarge(err, request) ?? toAppError(err);
    if (appError.code === 'unavailable') request.log.warn({ err }, 'database unavailable');
    else if (appError.status >= 500) request.log.error({ err }, 'request failed');
    return sendProblem(reply, request, appError);
  });

  const routes: { method: string; pattern: RegExp }[] = [];
  app.addHook('onRoute', (route) => {
    // A catch-all (CORS's preflight route) says nothing about which paths exist.
    if (route.url === '*' || route.url === '/*') return;
    const pattern = new RegExp(
      `^${route.url
        .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
        .replace(/:[^/]+/g, '[^/]+')
        .replace(/\*/g, '.*')}$`,
    );
    for (const method of [route.method].flat()) routes.push({ method, pattern });
  });
  app.setNotFoundHandler(async (request, reply) => {
    await keys.meterUnrouted(request, reply);
    const path = request.url.split('?', 1)[0] ?? '';
    const allowed = [...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method))];
    if (allowed.length > 0) {
      const allow = allowed.join(', ');
      return sendProblem(
        reply,
        request,
        new AppError('method_not_allowed', `${request.method} is not allowed on ${path}; allowed: ${allow}`, undefined, { allow }),
      );
    }
    return sendProblem(reply, request, new AppError('not_found', `No route matches ${request.method} ${path}`));
  });
}

/**
 * A body over the route's limit, read no further: the limit is named, and on a route whose body
 * takes a page's `content` so is that content's own bound (MAX_CONTENT_BYTES, src/pages/sections.ts,
 * which this layer may not import), since that is what such a body is most often too large for.
 */
function bodyTooLarge(err: unknown, request: FastifyRequest): AppError | undefined {
  if ((err as { code?: unknown }).code !== 'FST_ERR_CTP_BODY_TOO_LARGE') return undefined;
  const limit = request.routeOptions.bodyLimit;
  const body = request.routeOptions.schema?.body as { properties?: Record<string, unknown> } | undefined;
  const content = body?.properties?.content !== undefined ? '; a content (/content) is at most 512 KB of it' : '';
  return new AppError('payload_too_large', `The request body exceeds the size limit of ${limit} bytes${content}`);
}
