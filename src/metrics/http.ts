import { createHash, timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { MetricsConfig } from '../config.js';
import type { Series } from './accumulators.js';
import type { MetricsRegistry } from './registry.js';

export type Plane = 'api' | 'site';

declare module 'fastify' {
  interface FastifyRequest {
    /** Counted by this instance's request series (a request handed to the visitor plane is not). */
    metered: boolean;
  }
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The request series: counted and timed by route template (never the path), method and status class. */
export function requestMetrics(metrics: MetricsRegistry) {
  const duration = metrics.hotHistogram('http_request_duration_seconds', 'Time to answer a request', DURATION_BUCKETS, {
    name: 'http_requests_total',
    help: 'Requests answered, by route template, method and status class',
  });
  const flying: Record<Plane, number> = { api: 0, site: 0 };
  metrics.gauge('http_requests_in_flight', 'Requests received and not yet answered', ['plane'], (gauge) => {
    for (const plane of ['api', 'site'] as const) gauge.set({ plane }, flying[plane]);
  });

  // One series per label set, found without building a key: route, then method, then status class.
  const series: Record<Plane, Map<string, Map<string, (Series | undefined)[]>>> = { api: new Map(), site: new Map() };
  const seriesOf = (plane: Plane, route: string, method: string, status: number): Series => {
    let byMethod = series[plane].get(route);
    if (!byMethod) {
      byMethod = new Map();
      series[plane].set(route, byMethod);
    }
    let byClass = byMethod.get(method);
    if (!byClass) {
      byClass = [];
      byMethod.set(method, byClass);
    }
    const statusClass = Math.trunc(status / 100);
    let found = byClass[statusClass];
    if (!found) {
      found = duration.series({ plane, route, method, status_class: `${statusClass}xx` });
      byClass[statusClass] = found;
    }
    return found;
  };

  /** Adds the hooks to one Fastify instance (the API app, or the visitor plane's). */
  return function instrument(app: FastifyInstance, plane: Plane): void {
    const landed = () => {
      flying[plane]--;
    };
    app.decorateRequest('metered', false);
    app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
      // Already answered: handed over to the visitor plane, which counts it itself.
      if (reply.sent) return done();
      request.metered = true;
      flying[plane]++;
      // 'close' comes once, when the response is sent or the client has gone, whichever happens.
      reply.raw.on('close', landed);
      done();
    });
    app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
      if (!request.metered) return done();
      const route = request.routeOptions.url ?? 'unmatched';
      const method = METHODS.has(request.method) ? request.method : 'OTHER';
      seriesOf(plane, route, method, reply.statusCode).observe(reply.elapsedTime / 1000);
      done();
    });
  };
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * `Authorization: Bearer <token>`. Both sides are hashed first, so the constant-time comparison
 * always runs, on 32 bytes each: how long it takes tells nothing of the token's length.
 */
function hasToken(request: FastifyRequest, expected: Buffer): boolean {
  const given = /^Bearer (\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
  const same = timingSafeEqual(digest(given ?? ''), expected);
  return same && given !== undefined;
}

/** `GET /metrics` on the API's host, to the bearer of METRICS_TOKEN only; hidden from the OpenAPI document. */
export function metricsRoute(app: FastifyInstance, metrics: MetricsRegistry, token: string): void {
  const expected = digest(token);
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (!hasToken(request, expected)) {
      return reply.code(401).header('www-authenticate', 'Bearer').type('text/plain; charset=utf-8').send('A metrics token is needed.\n');
    }
    const { contentType, body } = await metrics.expose();
    return reply.header('cache-control', 'no-store').type(contentType).send(body);
  });
}

/**
 * `GET /metrics` on a port of its own (METRICS_PORT), at METRICS_HOST (loopback unless said
 * otherwise): for a scraper on the same host or network, without a token. Nothing else is served there.
 */
export async function metricsServer(metrics: MetricsRegistry, config: MetricsConfig & { port: number }): Promise<FastifyInstance> {
  const server = Fastify({ logger: false });
  server.get('/metrics', async (_request, reply) => {
    const { contentType, body } = await metrics.expose();
    return reply.header('cache-control', 'no-store').type(contentType).send(body);
  });
  await server.listen({ port: config.port, host: config.host });
  return server;
}
