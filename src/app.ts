import cors from '@fastify/cors';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import { accountRoutes } from './accounts/routes.js';
import { adminRoutes } from './admin/routes.js';
import { analyticsRoutes } from './analytics/routes.js';
import { apiKeyRoutes } from './api-keys/routes.js';
import { generatorFor } from './agent/generators.js';
import { agentRoutes } from './agent/routes.js';
import { createAgent, type AgentTuning } from './agent/worker.js';
import { fileUrlSecret, urlSigner } from './assets/files.js';
import { assetRoutes } from './assets/routes.js';
import { fileStores } from './assets/store.js';
import { audienceRoutes } from './audiences/routes.js';
import type { Config } from './config.js';
import { consoleRoutes } from './console/routes.js';
import { openDatabase, type Db } from './db/connection.js';
import { migrateDatabase } from './db/migrate.js';
import { serviceMetrics } from './metrics/service.js';
import { createDomainChecks } from './domains/checks.js';
import { txtLookup } from './domains/dns.js';
import { hostnameRules } from './domains/hostnames.js';
import { domainRoutes } from './domains/routes.js';
import { releaseRefusedDomains } from './domains/sweep.js';
import { tlsAskRoutes } from './domains/tls.js';
import { eventRoutes } from './events/routes.js';
import { experimentRoutes } from './experiments/routes.js';
import { funnelRoutes } from './funnels/routes.js';
import { goalRoutes } from './goals/routes.js';
import { createReweighing } from './experiments/reweigh.js';
import { apiKeyAuth } from './http/auth.js';
import './http/context.js';
import { registerErrorHandling } from './http/error-handling.js';
import { healthRoutes } from './http/health.js';
import { registerJsonBody } from './http/json-body.js';
import { registerOpenApi } from './http/openapi.js';
import { memoryLimiter, redisLimiter } from './http/rate-limit.js';
import { refuseUnknownQueryParameters, requireApiKey, wakeAfterWrites } from './http/route-rules.js';
import { serverOptions } from './http/server-options.js';
import { validatorCompiler } from './http/validation.js';
import { createMaintenance } from './jobs/maintenance.js';
import { leadRoutes } from './leads/routes.js';
import { createSessionEnds } from './sessions/announce.js';
import { logRoutes } from './logs/routes.js';
import { routeCatalogue } from './mcp/catalogue.js';
import { mcpRoutes } from './mcp/routes.js';
import { deleteDomainLinks } from './page-links/repository.js';
import { pageLinkRoutes } from './page-links/routes.js';
import { previewLinks } from './pages/preview-links.js';
import { pageRoutes } from './pages/routes.js';
import { personRoutes } from './persons/routes.js';
import { previewDocument, previewExists } from './render/preview.js';
import { sessionRoutes } from './sessions/routes.js';
import { siteSettingsRoutes } from './site-settings/routes.js';
import { buildSite } from './site/app.js';
import { openDoor } from './site/door.js';
import { siteHosts } from './site/hosts.js';
import { topicRoutes } from './topics/routes.js';
import { createDispatcher } from './webhooks/dispatcher.js';
import { webhookRoutes } from './webhooks/routes.js';
import type { Resolve } from './webhooks/send.js';

export interface AppOptions {
  config: Config;
  /** How often housekeeping runs (an hour by default); tests shorten it. */
  maintenanceEveryMs?: number;
  /** The page agent's timings and batch size; tests shorten them. */
  agent?: AgentTuning;
  /** How often pending domains' due checks are looked for (a minute by default); tests shorten it. */
  domainChecksEveryMs?: number;
  /** How often bandits due a recomputation are looked for (a minute by default); tests shorten it. */
  reweighEveryMs?: number;
  /** How often visits whose `session.ended` fell due are looked for (15 s by default); tests shorten it. */
  sessionEndsEveryMs?: number;
  /** Where webhook deliveries look names up (the system's resolver by default); tests give names the addresses an attacker would. */
  webhookResolve?: Resolve;
}

/**
 * Builds the whole service; `server.ts` listens on it and every test drives it, with the same
 * options. Wiring only: what each piece does is in its own module. The order matters where said.
 */
export async function buildApp({
  config,
  maintenanceEveryMs,
  agent: agentTuning,
  domainChecksEveryMs,
  reweighEveryMs,
  sessionEndsEveryMs,
  webhookResolve,
}: AppOptions): Promise<FastifyInstance> {
  const app = Fastify(serverOptions(config)).withTypeProvider<TypeBoxTypeProvider>();

  // Metrics only when asked for (METRICS_TOKEN or METRICS_PORT): otherwise nothing of them runs.
  const metrics = serviceMetrics(config.metrics);
  await migrateDatabase(config.database);
  const db: Db = openDatabase(config.database, undefined, metrics?.database);
  metrics?.watchDatabase(db);
  app.addHook('onClose', () => db.close());
  app.decorate('db', db.kysely);
  app.decorate('config', config);
  app.decorateRequest('tenantId', '');
  app.decorateRequest('apiKeyId', '');

  const limiter = config.redisUrl ? await redisLimiter(config.redisUrl, app.log) : memoryLimiter();
  await limiter.ready();
  app.addHook('onClose', () => limiter.close());
  const keys = apiKeyAuth(app.db, limiter, config.rateLimit, metrics && (() => metrics.rateLimited('api')), {
    dataVersion: db.dataVersion,
    feed: db.changeFeed?.(),
  });

  // The visitor plane (src/site/): the door opened at the end sends it every request on a tenant domain.
  const secret = await fileUrlSecret(app.db, config.fileUrlSecret);
  const stores = fileStores(app.db, config.dataDir, config.fileStore);
  // Names under the rules' refusal are released before the first request (src/domains/sweep.ts).
  const rules = hostnameRules(config);
  // A domain's page links go with it: the page-links area's rule, handed to the domains area.
  const dropLinks = deleteDomainLinks;
  await releaseRefusedDomains(app.db, dropLinks, rules, app.log);
  const hosts = siteHosts(app.db, rules, db.dataVersion);
  const observe = metrics && {
    instrument: (site: FastifyInstance) => metrics.instrument(site, 'site'),
    report: metrics.collectorReport,
    watchDocuments: metrics.watchSiteDocuments,
  };
  const site = await buildSite({ db: app.db, dataVersion: db.dataVersion, config, log: app.log, secret, stores, observe });
  metrics?.instrument(app, 'api');
  app.addHook('onClose', () => site.close());

  app.setValidatorCompiler(validatorCompiler);
  registerErrorHandling(app, keys);
  registerJsonBody(app);
  if (config.corsOrigins.length > 0) {
    await app.register(cors, {
      origin: config.corsOrigins,
      methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
      allowedHeaders: ['content-type', 'x-api-key', 'x-request-id', 'authorization', 'mcp-protocol-version'],
      exposedHeaders: ['x-request-id', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after', 'idempotent-replayed'],
    });
  }

  // Background work: webhook delivery where enabled, housekeeping in every process.
  const dispatcher = createDispatcher(db.kysely, config.webhooks, app.log, metrics?.webhookDelivery, webhookResolve);
  if (config.webhooks.enabled) {
    app.addHook('onReady', async () => dispatcher.start());
    app.addHook('preClose', async () => dispatcher.stop());
  }
  const agent = createAgent(db.kysely, config.agent, await generatorFor(config.agent), app.log, agentTuning, metrics?.agentGeneration);
  if (config.agent.enabled) {
    app.addHook('onReady', async () => agent.start());
    app.addHook('preClose', async () => agent.stop());
  }
  const lookup = txtLookup(config.dnsResolvers);
  const domainChecks = createDomainChecks(db.kysely, dropLinks, lookup, app.log, domainChecksEveryMs);
  app.addHook('onReady', async () => domainChecks.start());
  app.addHook('preClose', async () => domainChecks.stop());
  const reweighing = createReweighing(db.kysely, app.log, reweighEveryMs);
  app.addHook('onReady', async () => reweighing.start());
  app.addHook('preClose', async () => reweighing.stop());
  const sessionEnds = createSessionEnds(db.kysely, app.log, config.sessionIdleSeconds, sessionEndsEveryMs);
  app.addHook('onReady', async () => sessionEnds.start());
  app.addHook('preClose', async () => sessionEnds.stop());
  const maintenance = createMaintenance(db.kysely, app.log, maintenanceEveryMs);
  app.addHook('onReady', async () => maintenance.start());
  app.addHook('preClose', async () => maintenance.stop());

  // The route rules (http/route-rules.ts), before any route they apply to is declared.
  app.addHook('onRoute', requireApiKey(keys.hook));
  app.addHook('onRoute', refuseUnknownQueryParameters);
  if (config.webhooks.enabled) app.addHook('onRoute', wakeAfterWrites(dispatcher));
  // A write may have queued versions: the agent of this process looks at once (the others at their next poll).
  if (config.agent.enabled) app.addHook('onRoute', wakeAfterWrites(agent));
  // The MCP tools take their schemas from the routes as declared (src/mcp/catalogue.ts).
  const catalogue = routeCatalogue();
  app.addHook('onRoute', catalogue.hook);

  await registerOpenApi(app);
  await app.register(healthRoutes);
  await metrics?.serve(app);

  // The areas, each one plugin.
  if (config.adminToken !== undefined) await app.register(adminRoutes, { adminToken: config.adminToken, dropLinks });
  await app.register(assetRoutes, { signer: urlSigner(config.publicBaseUrl, secret), stores });
  await app.register(personRoutes);
  await app.register(accountRoutes);
  await app.register(logRoutes);
  await app.register(pageRoutes, {
    previews: { exists: previewExists, document: previewDocument },
    links: previewLinks(config.publicBaseUrl, secret),
  });
  await app.register(audienceRoutes);
  await app.register(agentRoutes);
  await app.register(sessionRoutes);
  await app.register(siteSettingsRoutes);
  await app.register(leadRoutes);
  await app.register(analyticsRoutes);
  await app.register(experimentRoutes);
  await app.register(goalRoutes);
  await app.register(funnelRoutes);
  await app.register(domainRoutes, { rules, lookup, dropLinks });
  await app.register(tlsAskRoutes, { rules });
  await app.register(topicRoutes);
  await app.register(pageLinkRoutes);
  await app.register(webhookRoutes);
  await app.register(eventRoutes);
  await app.register(apiKeyRoutes);
  await app.register(consoleRoutes, { publicBaseUrl: config.publicBaseUrl });
  // After every area: the tools read their operations from the catalogue.
  await app.register(mcpRoutes, { catalogue, keys });

  await app.ready();
  // Every request, from a socket or injected, comes in by one door that picks its plane by Host.
  openDoor(app, hosts, site);
  return app;
}
