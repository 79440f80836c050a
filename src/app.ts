import path from 'node:path';
import cors from '@fastify/cors';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import { accountRoutes } from './accounts/index.js';
import { markKeyUsed, adminRoutes } from './admin/index.js';
import { heatmapRoutes, analyticsRoutes } from './analytics/index.js';
import { apiKeyRoutes } from './api-keys/index.js';
import { generatorFor, agentRoutes, createAgent, type AgentTuning } from './agent/index.js';
import {
  fileUrlSecret,
  keptKey,
  urlSigner,
  assetRoutes,
  fileStores,
  type BackfillTuning,
  createRenditionsBackfill,
} from './assets/index.js';
import { pageCopies, audienceRoutes } from './audiences/index.js';
import type { Config } from './config.js';
import { consoleRoutes } from './console-host/index.js';
import { experienceChangesOfTenant, snippetRoutes, toolRoutes, onsiteRoutes, onsiteMeasureRoutes } from './onsite/index.js';
import type { Freshness } from './db/changes.js';
import { openDatabase, type Db } from './db/connection.js';
import { migrateDatabase } from './db/migrate.js';
import { serviceMetrics } from './metrics/index.js';
import { companiesByNetwork, httpProvider, type CompanyLookup } from './enrichment/index.js';
import { createDomainChecks, txtLookup, hostnameRules, domainRoutes, releaseRefusedDomains, tlsAskRoutes } from './domains/index.js';
import { ensureConsumers, eventRoutes, systemResolve, type Resolve } from './events/index.js';
import { experimentRoutes, createReweighing } from './experiments/index.js';
import { funnelRoutes } from './funnels/index.js';
import { goalRoutes } from './goals/index.js';
import { dealRoutes } from './deals/index.js';
import { apiKeyAuth } from './http/auth.js';
import './http/context.js';
import { registerErrorHandling } from './http/error-handling.js';
import { healthRoutes } from './http/health.js';
import { registerJsonBody } from './http/json-body.js';
import type { LingerBounds } from './http/linger.js';
import { listeningPort, publicOrigin } from './http/public-origin.js';
import { registerOpenApi } from './http/openapi.js';
import { memoryLimiter, redisLimiter } from './http/rate-limit.js';
import { refuseUnknownQueryParameters, requireApiKey, wakeAfterWrites } from './http/route-rules.js';
import { serverOptions } from './http/server-options.js';
import { validatorCompiler } from './http/validation.js';
import { HOUSEKEEPING } from './housekeeping.js';
import { createMaintenance, type BackgroundJob } from './jobs/index.js';
import { integrationRoutes, sealer, createCrmSync, type CrmSyncOptions } from './integrations/index.js';
import { leadRoutes, forgetLeadsOf } from './leads/index.js';
import { applyCollectFunction, createSessionEnds, sessionRoutes } from './visits/index.js';
import { deleteLogsOf, logRoutes } from './logs/index.js';
import { routeCatalogue, mcpRoutes } from './mcp/index.js';
import { deleteDomainLinks, pageLinkRoutes } from './page-links/index.js';
import { previewLinks, pageRoutes } from './pages/index.js';
import { templateStart, templateRoutes } from './templates/index.js';
import { personRoutes } from './persons/index.js';
import { previewRenderer, chooseForVisit, buildSite, openDoor, siteHosts } from './site/index.js';
import { siteSettingsRoutes } from './site-settings/index.js';
import { topicRoutes } from './topics/index.js';
import { createDispatcher, webhookRoutes } from './webhooks/index.js';
import { createAlertSender, sealStoredWebhookUrls, alertRoutes } from './alerts/index.js';

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
  /** How much of a refused body is read before its connection closes (64 MiB, 10 s by default); tests shorten it. */
  linger?: LingerBounds;
  /** Where webhook deliveries look names up (the system's resolver by default); tests give names the addresses an attacker would. */
  webhookResolve?: Resolve;
  /** The CRM sync's poll and retry waits; tests shorten them. */
  crmSync?: Pick<CrmSyncOptions, 'pollMs' | 'sleep' | 'consumeLeads'>;
  /** The company behind a visitor's address, for segments (src/enrichment/visit.ts); the provider's by default (ENRICHMENT_URL). */
  companyLookup?: CompanyLookup;
  /** The image widths backfill's poll and lease (a minute, five minutes by default); tests shorten them. */
  renditions?: BackfillTuning;
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
  linger,
  crmSync: crmSyncTuning,
  companyLookup,
  renditions: renditionsTuning,
}: AppOptions): Promise<FastifyInstance> {
  const app = Fastify(serverOptions(config)).withTypeProvider<TypeBoxTypeProvider>();

  // Metrics only when asked for (METRICS_TOKEN or METRICS_PORT): otherwise nothing of them runs.
  const metrics = serviceMetrics(config.metrics);
  await migrateDatabase(config.database);
  const db: Db = openDatabase(config.database, undefined, metrics?.database);
  // The collector's PostgreSQL function is no migration's: it follows src/visits/collect.sql.ts.
  await applyCollectFunction(db.kysely);
  // Each consumer of the outbox has its cursor (events/consumers.ts), one added since included.
  await ensureConsumers(db.kysely);
  metrics?.watchDatabase(db);
  app.addHook('onClose', () => db.close());
  app.decorate('db', db.kysely);
  app.decorate('config', config);
  app.decorateRequest('tenantId', '');
  app.decorateRequest('apiKeyId', '');

  const limiter = config.redisUrl ? await redisLimiter(config.redisUrl, app.log) : memoryLimiter();
  await limiter.ready();
  app.addHook('onClose', () => limiter.close());
  // How a kept answer (a key's row, a live site) is known to be current without a counter's read.
  const freshness: Freshness = { dataVersion: db.dataVersion, feed: db.changeFeed?.() };
  const keys = apiKeyAuth(app.db, limiter, config.rateLimit, markKeyUsed, metrics && (() => metrics.rateLimited('api')), freshness);

  // The visitor plane (src/site/): the door opened at the end sends it every request on a tenant domain.
  const secret = await fileUrlSecret(app.db, config.fileUrlSecret);
  const stores = fileStores(app.db, config.dataDir, config.fileStore);
  // Names under the rules' refusal are released before the first request (src/domains/sweep.ts).
  const rules = hostnameRules(config);
  // A domain's page links go with it: the page-links area's rule, handed to the domains area; its
  // answers and events name the record that sends visitors (SITE_CNAME_TARGET).
  const domains = { dropLinks: deleteDomainLinks, routing: config.siteCnameTarget };
  await releaseRefusedDomains(app.db, domains, rules, app.log);
  const hosts = siteHosts(app.db, rules, db.dataVersion);
  const observe = metrics && {
    instrument: (site: FastifyInstance) => metrics.instrument(site, 'site'),
    report: metrics.collectorReport,
    watchDocuments: metrics.watchSiteDocuments,
  };
  // Every absolute address of a tenant page is made by this one function (http/public-origin.ts).
  const origin = publicOrigin({
    scheme: config.siteUrlScheme,
    publicBaseUrl: config.publicBaseUrl,
    trustProxy: config.trustProxy,
    port: listeningPort(app.server, config.port),
  });
  // The enrichment provider (ENRICHMENT_URL), asked about a visit's address and a lead's email domain.
  const enrichment = config.enrichment && httpProvider(config.enrichment, metrics?.enrichmentAnswer);
  // A test's own look-up (AppOptions), else the provider's (ENRICHMENT_URL), else none.
  const companies = companyLookup ?? companiesByNetwork(app.db, enrichment);
  const site = await buildSite({
    db: app.db,
    dataVersion: db.dataVersion,
    config,
    log: app.log,
    secret,
    stores,
    origin,
    observe,
    companyLookup: companies,
    enrichment,
    // A section an experience inserts in a customer's site shows tenant files too (issue 48).
    moreServedTexts: experienceChangesOfTenant,
  });
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

  // CRM credentials and alert webhook URLs are sealed with INTEGRATIONS_SECRET; unset, with a key
  // in a file beside the SQLite database, and on PostgreSQL not at all (docs/security.md).
  const onDisk = config.database.kind === 'sqlite' && config.database.path !== ':memory:';
  const keyFile = onDisk ? path.join(config.dataDir, 'secret.key') : undefined;
  const integrations = {
    sealer: sealer(await keptKey(app.db, 'integrations_secret', config.integrations.secret, keyFile)),
    config: config.integrations,
  };
  // Alert webhook URLs stored in the clear by an older version are sealed now that the key is known.
  const clearUrls = await sealStoredWebhookUrls(app.db, integrations.sealer);
  if (clearUrls > 0)
    app.log.warn({ alerts: clearUrls }, 'alert webhook URLs are stored unencrypted: set INTEGRATIONS_SECRET (docs/security.md)');

  // Background work: webhook delivery and the agent where enabled, the rest in every process.
  // Each starts once the app is ready and stops before it closes, in one list.
  // Webhooks and alerts each read the outbox from a cursor of their own (events/consumers.ts);
  // alerts run wherever ALERT_SENDER is on (every process by default), whether it delivers webhooks or not.
  const dispatcher = createDispatcher(db.kysely, config.webhooks, app.log, metrics?.webhookDelivery, webhookResolve);
  const alertSender = createAlertSender(
    db.kysely,
    config.webhooks,
    `${config.publicBaseUrl}/console/`,
    app.log,
    webhookResolve ?? systemResolve,
    integrations.sealer,
  );
  const agent = createAgent(db.kysely, config.agent, await generatorFor(config.agent), app.log, agentTuning, metrics?.agentGeneration);
  const lookup = txtLookup(config.dnsResolvers);
  const crmSync = createCrmSync(db.kysely, config.integrations, integrations.sealer, app.log, {
    ...crmSyncTuning,
    ...(metrics ? { onOutcome: metrics.integrationSync } : {}),
  });
  const jobs: BackgroundJob[] = [
    ...(config.webhooks.enabled ? [dispatcher] : []),
    ...(config.webhooks.alerts ? [alertSender] : []),
    ...(config.agent.enabled ? [agent] : []),
    createDomainChecks(db.kysely, domains, lookup, app.log, domainChecksEveryMs),
    createReweighing(db.kysely, app.log, reweighEveryMs),
    createSessionEnds(db.kysely, app.log, config.sessionIdleSeconds, sessionEndsEveryMs),
    createMaintenance(db.kysely, app.log, HOUSEKEEPING, maintenanceEveryMs),
    crmSync,
    createRenditionsBackfill(db.kysely, stores, app.log, renditionsTuning),
  ];
  for (const job of jobs) {
    app.addHook('onReady', async () => job.start());
    app.addHook('preClose', async () => job.stop());
  }

  // The route rules (http/route-rules.ts), before any route they apply to is declared.
  app.addHook('onRoute', requireApiKey(keys.hook));
  app.addHook('onRoute', refuseUnknownQueryParameters);
  if (config.webhooks.enabled) app.addHook('onRoute', wakeAfterWrites(dispatcher));
  if (config.webhooks.alerts) app.addHook('onRoute', wakeAfterWrites(alertSender));
  // A write may have queued versions: the agent of this process looks at once (the others at their next poll).
  if (config.agent.enabled) app.addHook('onRoute', wakeAfterWrites(agent));
  // The MCP tools take their schemas from the routes as declared (src/mcp/catalogue.ts).
  const catalogue = routeCatalogue();
  app.addHook('onRoute', catalogue.hook);

  await registerOpenApi(app);
  await app.register(healthRoutes);
  await metrics?.serve(app);

  // The areas, each one plugin.
  if (config.adminToken !== undefined) await app.register(adminRoutes, { adminToken: config.adminToken, domains });
  const signer = urlSigner(config.publicBaseUrl, secret);
  await app.register(assetRoutes, { signer, stores });
  await app.register(personRoutes, { forgetLeads: forgetLeadsOf });
  // An account's logs go with it: the logs area's function, handed to the accounts area.
  await app.register(accountRoutes, { dropLogs: (trx, tenantId, accountId) => deleteLogsOf(trx, 'account', tenantId, accountId) });
  await app.register(logRoutes);
  await app.register(pageRoutes, {
    previews: previewRenderer(signer, chooseForVisit),
    links: previewLinks(config.publicBaseUrl, secret),
    origin,
    // The audiences' copies of a page's name and deletion: the audiences area's writes, handed to pages.
    copies: pageCopies,
    // A template's content and actions for a new page: the templates area's read, handed to pages.
    templates: templateStart,
  });
  await app.register(audienceRoutes, { origin });
  await app.register(agentRoutes, {
    info: { generator: config.agent.generator, model: config.agent.openai?.model ?? null, worker: config.agent.enabled },
  });
  await app.register(sessionRoutes);
  await app.register(siteSettingsRoutes);
  await app.register(leadRoutes);
  await app.register(integrationRoutes, { ...integrations, wake: crmSync.wake });
  await app.register(analyticsRoutes);
  await app.register(heatmapRoutes);
  await app.register(experimentRoutes);
  await app.register(goalRoutes);
  await app.register(funnelRoutes);
  await app.register(templateRoutes);
  await app.register(dealRoutes);
  await app.register(onsiteMeasureRoutes, { secret });
  await app.register(domainRoutes, { rules, lookup, wiring: domains });
  await app.register(tlsAskRoutes, { rules });
  await app.register(topicRoutes);
  await app.register(pageLinkRoutes);
  await app.register(webhookRoutes);
  await app.register(alertRoutes, { wake: alertSender.wake, sealer: integrations.sealer });
  await app.register(eventRoutes);
  await app.register(apiKeyRoutes);
  await app.register(onsiteRoutes, { publicBaseUrl: config.publicBaseUrl });
  await app.register(consoleRoutes, { publicBaseUrl: config.publicBaseUrl, fallbackDomainSuffix: config.fallbackDomainSuffix });
  // The site script of issue 48 and what it asks, on the API host (src/onsite/snippet/).
  await app.register(snippetRoutes, { secret, companyLookup: companies, origin, freshness });
  await app.register(toolRoutes);
  // After every area: the tools read their operations from the catalogue.
  await app.register(mcpRoutes, { catalogue, keys, origin });

  await app.ready();
  // Every request, from a socket or injected, comes in by one door that picks its plane by Host.
  // SQLite's reads of a turn share a snapshot: a request's must not predate it (src/db/sqlite.ts).
  openDoor(app, hosts, site, { linger, arrived: db.requestArrived });
  return app;
}
