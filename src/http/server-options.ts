import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { FastifyServerOptions } from 'fastify';
import type { Config } from '../config.js';
import { countAccepts } from './accepts.js';
import { sendProblem, toAppError } from './errors.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The HTTP server's own settings: logging, body limit, timeouts, request ids, the router's errors. */
export function serverOptions(config: Config): FastifyServerOptions<http.Server> {
  return {
    logger: {
      level: config.logLevel,
      redact: { paths: ['req.headers["x-api-key"]', 'req.headers.authorization'], censor: '[redacted]' },
      // Every request is logged with its method, URL and host only: no client address, since the
      // same server takes visitors on tenant domains, whose addresses the service never keeps.
      serializers: { req: (req) => ({ method: req.method, url: req.url, hostname: req.hostname }) },
    },
    bodyLimit: config.bodyLimit,
    // Slow clients are cut off: request headers within 10 s (slowloris), the whole request within
    // 30 s, idle keep-alive connections after 5 s. Node enforces the first two when it sweeps its
    // connections, every 30 s by default: every second here, so a trickling client goes in time.
    // The server takes no listener of Fastify's: its one listener is the door (src/site/door.ts),
    // which app.ts opens once both planes exist, and which hands API requests to the app's routing.
    serverFactory: () => {
      const server = http.createServer({ connectionsCheckingInterval: 1000, headersTimeout: 10_000, requestTimeout: 30_000 });
      server.keepAliveTimeout = 5_000;
      countAccepts(server);
      return server;
    },
    // The router's own errors (bad percent-encoding, an overlong path segment) leave as problem+json too.
    frameworkErrors: (err, request, reply) => {
      reply.header('x-request-id', request.id).header('x-content-type-options', 'nosniff').header('cache-control', 'no-store');
      sendProblem(reply, request, toAppError(err));
    },
    // A caller's own request id is kept when it is sane, so logs can be joined across services.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
  };
}
