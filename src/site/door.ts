import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type LightMyRequest from 'light-my-request';
import type { CallbackFunc, InjectOptions } from 'light-my-request';
import { problemOf, toAppError } from '../http/errors.js';
import { type LingerBounds, lingering } from '../http/linger.js';
import type { Site } from './app.js';
import type { SiteHosts } from './hosts.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * The one way in: the server's request listener, which sends every request, its body not yet
 * read, to the plane its Host names. A tenant domain gets the visitor plane whatever the path
 * (API routes never answer there, and the plane's paths exist only there), with router errors in
 * its own HTML; every other host gets the API. A Host already known costs a Map lookup and no
 * promise; the first request of a host waits for one indexed read (site/hosts.ts).
 */
export function door(hosts: SiteHosts, api: Listener, site: Site, log: FastifyBaseLogger, arrived?: () => void): Listener {
  return (req, res) => {
    arrived?.();
    const known = hosts.peek(req.headers.host);
    if (known === null) return api(req, res);
    if (known !== undefined) return site.enter(req, res, known);
    hosts.lookup(req.headers.host).then(
      (host) => (host ? site.enter(req, res, host) : api(req, res)),
      (err: unknown) => unplaced(res, err, log),
    );
  };
}

/**
 * The Host could not be looked up (the database is away): neither plane can be named, so the door
 * answers as the API answers a failed read (503 `unavailable`, Retry-After), as the API's own
 * hook did when it made this lookup.
 */
function unplaced(res: ServerResponse, err: unknown, log: FastifyBaseLogger): void {
  const failure = toAppError(err);
  const requestId = randomUUID();
  log.warn({ err, requestId }, 'the Host of a request could not be looked up');
  res.writeHead(failure.status, {
    ...failure.headers,
    'content-type': 'application/problem+json',
    'x-request-id': requestId,
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
  });
  res.end(JSON.stringify(problemOf(failure, requestId)));
}

/**
 * Opens the door on the API app's server, and has the app's `inject` come in by it too, so an
 * injected request (every test) meets the planes exactly as one from a socket. `arrived` is told
 * of each request first (SQLite: its reads then see every commit made before it). Either plane's
 * refusal of a body still arriving closes the connection lingering (http/linger.ts).
 */
export function openDoor(
  app: FastifyInstance,
  hosts: SiteHosts,
  site: Site,
  options: { linger?: LingerBounds; arrived?: () => void } = {},
): void {
  const listener = lingering(door(hosts, app.routing, site, app.log, options.arrived), options.linger);
  app.server.on('request', listener);
  app.inject = injectThrough(listener);
}

const load = createRequire(import.meta.url);

function injectThrough(listener: Listener): FastifyInstance['inject'] {
  // Loaded at the first injection, as Fastify does: a server that never injects saves its 8 MB.
  let inject: typeof LightMyRequest | undefined;
  function through(options?: string | InjectOptions, callback?: CallbackFunc) {
    inject ??= load('light-my-request') as typeof LightMyRequest;
    return callback ? inject(listener, options ?? {}, callback) : inject(listener, options);
  }
  return through as FastifyInstance['inject'];
}
