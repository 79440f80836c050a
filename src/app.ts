import { randomUUID } from 'node:crypto';
import http from 'node:http';
import swagger from '@fastify/swagger';
import cors from '@fastify/cors';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import Fastify, { type FastifyInstance, type onResponseHookHandler } from 'fastify';
import { sql } from 'kysely';
import { accountRoutes } from './accounts/routes.js';
import { adminRoutes } from './admin/routes.js';
import { fileUrlSecret, urlSigner } from './assets/files.js';
import { assetRoutes, downloadRoutes, fileUploadRoutes } from './assets/routes.js';
import { fileStores } from './assets/store.js';
import { audienceRoutes } from './audiences/routes.js';
import type { Config } from './config.js';
import { openDatabase, type Db } from './db/connection.js';
import { migrateToLatest } from './db/migrate.js';
import { domainRoutes } from './domains/routes.js';
import { apiKeyAuth, type ApiKeyAuth } from './http/auth.js';
import { memoryLimiter, redisLimiter } from './http/rate-limit.js';
import './http/context.js';
import { AppError, sendProblem, toAppError, type FieldError } from './http/errors.js';
import { openApiOptions } from './http/openapi.js';
import { NoQuery } from './http/schemas.js';
import { validatorCompiler } from './http/validation.js';
import { eventRoutes } from './events/routes.js';
import { createMaintenance } from './jobs/maintenance.js';
import { logRoutes } from './logs/routes.js';
import { pageLinkRoutes } from './page-links/routes.js';
import { pageRoutes } from './pages/routes.js';
import { personRoutes } from './persons/routes.js';
import { sessionRoutes } from './sessions/routes.js';
import { topicRoutes } from './topics/routes.js';
import { createDispatcher } from './webhooks/dispatcher.js';
import { webhookRoutes } from './webhooks/routes.js';

export interface AppOptions {
  config: Config;
  /** How often housekeeping runs (an hour by default); tests shorten it. */
  maintenanceEveryMs?: number;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Builds the whole service; `server.ts` listens on it and every test drives it, with the same options. */
export async function buildApp({ config, maintenanceEveryMs }: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: { paths: ['req.headers["x-api-key"]', 'req.headers.authorization'], censor: '[redacted]' },
    },
    bodyLimit: config.bodyLimit,
    // Slow clients are cut off: request headers within 10 s (slowloris), the whole request within
    // 30 s, idle keep-alive connections after 5 s. Node enforces the first two when it sweeps its
    // connections, every 30 s by default: every second here, so a trickling client goes in time.
    serverFactory: (handler) => {
      const server = http.createServer({ connectionsCheckingInterval: 1000, headersTimeout: 10_000, requestTimeout: 30_000 }, handler);
      server.keepAliveTimeout = 5_000;
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
  }).withTypeProvider<TypeBoxTypeProvider>();

  const db: Db = openDatabase(config.database);
  app.addHook('onClose', () => db.close());
  await migrateToLatest(db);
  app.decorate('db', db.kysely);
  app.decorate('config', config);
  app.decorateRequest('tenantId', '');

  const limiter = config.redisUrl ? redisLimiter(config.redisUrl, app.log) : memoryLimiter();
  await limiter.ready();
  app.addHook('onClose', () => limiter.close());
  const keys = apiKeyAuth(app.db, limiter, config.rateLimit);

  app.setValidatorCompiler(validatorCompiler);
  registerErrorHandling(app, keys);
  registerJsonBody(app);
  if (config.corsOrigins.length > 0) {
    await app.register(cors, {
      origin: config.corsOrigins,
      methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
      allowedHeaders: ['content-type', 'x-api-key', 'x-request-id', 'authorization'],
      exposedHeaders: ['x-request-id', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after', 'idempotent-replayed'],
    });
  }

  // Webhook delivery runs beside the API; a change that may have written events wakes it at once.
  const dispatcher = createDispatcher(db.kysely, config.webhooks, app.log);
  if (config.webhooks.enabled) {
    app.addHook('onReady', async () => dispatcher.start());
    app.addHook('preClose', async () => dispatcher.stop());
    // Only routes that change something wake it: reads never pay for the hook.
    const wake: onResponseHookHandler = (_request, _reply, done) => {
      dispatcher.wake();
      done();
    };
    app.addHook('onRoute', (route) => {
      if ([route.method].flat().some((m) => m !== 'GET' && m !== 'HEAD')) route.onResponse = [wake, ...[route.onResponse ?? []].flat()];
    });
  }
  // Housekeeping runs in every process, whether it dispatches or not.
  const maintenance = createMaintenance(db.kysely, app.log, maintenanceEveryMs);
  app.addHook('onReady', async () => maintenance.start());
  app.addHook('preClose', async () => maintenance.stop());

  await app.register(swagger, openApiOptions);
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  app.get(
    '/healthz',
    {
      schema: { hide: true, response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
    },
    async () => {
      await sql`select 1`.execute(app.db);
      return { status: 'ok' as const };
    },
  );

  if (config.adminToken !== undefined) await app.register(adminRoutes, { adminToken: config.adminToken });

  const assets = {
    signer: urlSigner(config.publicBaseUrl, await fileUrlSecret(app.db, config.fileUrlSecret)),
    stores: fileStores(app.db, config.dataDir, config.fileStore),
  };
  await app.register(downloadRoutes, assets);

  await app.register(async (v0) => {
    v0.addHook('onRequest', keys.hook);
    await v0.register(personRoutes);
    await v0.register(accountRoutes);
    await v0.register(logRoutes);
    await v0.register(pageRoutes);
    await v0.register(audienceRoutes);
    await v0.register(sessionRoutes);
    await v0.register(fileUploadRoutes, assets);
    await v0.register(assetRoutes, assets);
    await v0.register(domainRoutes);
    await v0.register(topicRoutes);
    await v0.register(pageLinkRoutes);
    await v0.register(webhookRoutes);
    await v0.register(eventRoutes);
  });

  await app.ready();
  return app;
}

/** Every error, from any layer, leaves as problem+json; 405 is told apart from 404 by the route table. */
function registerErrorHandling(app: FastifyInstance, keys: ApiKeyAuth): void {
  // On every answer: its request id; no MIME sniffing; API answers are never cached (downloads set
  // their own cache-control later, which replaces this one).
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id).header('x-content-type-options', 'nosniff');
    if (!request.url.startsWith('/docs')) reply.header('cache-control', 'no-store');
    done();
  });

  app.setErrorHandler((err, request, reply) => {
    const appError = toAppError(err);
    if (appError.code === 'unavailable') request.log.warn({ err }, 'database unavailable');
    else if (appError.status >= 500) request.log.error({ err }, 'request failed');
    return sendProblem(reply, request, appError);
  });

  const routes: { method: string; pattern: RegExp }[] = [];
  app.addHook('onRoute', (route) => {
    if (/^\/(v0|admin)\//.test(route.url) && route.schema && !route.schema.querystring) {
      route.schema = { ...route.schema, querystring: NoQuery };
    }
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
 * Only application/json bodies are read (anything else is 415); an empty body is no body, not an
 * error. A body nested deeper than 64 levels, or with an array of more than 10,000 items, is
 * refused before anything else looks at it.
 */
function registerJsonBody(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body.toString();
    if (text.length === 0) {
      done(null, undefined);
      return;
    }
    if (nestingDepth(text) > MAX_JSON_DEPTH) {
      done(
        new AppError('validation_failed', `The body is nested deeper than ${MAX_JSON_DEPTH} levels`, [
          { path: '', message: `must not nest deeper than ${MAX_JSON_DEPTH} levels` },
        ]),
      );
      return;
    }
    parseJson(request, text, (err, parsed) => {
      if (err) return done(err);
      const problem = bodyProblem(parsed);
      if (problem)
        return done(new AppError('validation_failed', `Invalid body: ${problem.path || 'the body'} ${problem.message}`, [problem]));
      done(null, parsed);
    });
  });
}

const MAX_JSON_DEPTH = 64;
const MAX_JSON_ITEMS = 10_000;

/** The deepest nesting of objects and arrays in JSON text, read without parsing it (strings skipped). */
function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) deepest = Math.max(deepest, ++depth);
    else if (c === 125 || c === 93) depth--;
  }
  return deepest;
}

/**
 * What no schema can say about a parsed body: an array longer than the limit, a number that
 * overflowed to Infinity (`1e400`), or a NUL character (PostgreSQL cannot store one, and it
 * means nothing in text) in any string or key. The first one found, at its JSON Pointer.
 */
function bodyProblem(value: unknown, path = ''): FieldError | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? { path, message: 'must not contain the NUL character' } : undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : { path, message: 'is too large a number' };
  if (Array.isArray(value)) {
    if (value.length > MAX_JSON_ITEMS) return { path, message: `must not hold more than ${MAX_JSON_ITEMS} items` };
    for (let i = 0; i < value.length; i++) {
      const found = bodyProblem(value[i], `${path}/${i}`);
      if (found) return found;
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const at = `${path}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (k.includes('\u0000')) return { path: at, message: 'must not contain the NUL character' };
      const found = bodyProblem(v, at);
      if (found) return found;
    }
  }
  return undefined;
}
