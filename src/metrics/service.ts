import type { FastifyInstance } from 'fastify';
import type { MetricsConfig } from '../config.js';
import type { CountAnswer } from '../enrichment/index.js';
import type { Db } from '../db/connection.js';
import { agentGenerationMetrics, agentQueueMetrics, type GenerationOutcome } from './agent.js';
import { cacheMetrics } from './caches.js';
import { databaseMetrics, webhookBacklogMetrics } from './database.js';
import { metricsRoute, metricsServer, requestMetrics, type Plane } from './http.js';
import { createMetricsRegistry, type MetricsRegistry } from './registry.js';
import { type SiteCacheStats, siteCacheMetrics } from './site.js';

/** How a delivery attempt ended: delivered, to be retried, given up, or not attempted (subscription inactive). */
export type DeliveryOutcome = 'succeeded' | 'retrying' | 'failed' | 'skipped';
/** Why the collector refused a report (bounded: one of these). */
export type ReportRefusal = 'rate_limited' | 'bot' | 'invalid_report' | 'invalid_token' | 'page_gone' | 'error';

/**
 * Every series of the service, on one registry per app; built only when metrics are on (METRICS_TOKEN
 * or METRICS_PORT), so with them off no hook, no query log and no counter costs anything.
 */
export interface ServiceMetrics {
  registry: MetricsRegistry;
  instrument(app: FastifyInstance, plane: Plane): void;
  database: ReturnType<typeof databaseMetrics>;
  watchDatabase(db: Db): void;
  webhookDelivery(outcome: DeliveryOutcome): void;
  collectorReport(outcome: 'accepted' | ReportRefusal): void;
  rateLimited(plane: 'api' | 'collect'): void;
  /** The page agent's worker: each generation's outcome, and how long the generator took. */
  agentGeneration(outcome: GenerationOutcome, seconds: number | undefined): void;
  /** The CRM sync: each integration's sync by provider and outcome (issue 40). */
  integrationSync(provider: 'hubspot' | 'salesforce', outcome: 'succeeded' | 'failed' | 'refused'): void;
  /** The enrichment provider: each question's outcome (a company, unknown, a timeout, an error), by purpose. */
  enrichmentAnswer: CountAnswer;
  /** The visitor plane's caches, read when scraped. */
  watchSiteDocuments(read: () => SiteCacheStats): void;
  /** Serves `GET /metrics` as configured: on the API's host, on its own port, or both. */
  serve(app: FastifyInstance): Promise<void>;
}

export function serviceMetrics(config: MetricsConfig): ServiceMetrics | undefined {
  if (config.token === undefined && config.port === undefined) return undefined;
  const registry = createMetricsRegistry();
  const database = databaseMetrics(registry);
  cacheMetrics(registry);
  const deliveries = registry.counter('webhook_deliveries_total', 'Webhook delivery attempts by outcome', ['outcome']);
  const reports = registry.counter('collect_reports_total', 'Visit reports accepted, and refused by reason', ['outcome', 'reason']);
  const refusals = registry.counter('rate_limit_refusals_total', 'Requests refused by a rate limit (429)', ['plane']);
  const syncs = registry.counter('integration_syncs_total', 'CRM integration syncs by provider and outcome', ['provider', 'outcome']);
  const enrichment = registry.counter(
    'enrichment_answers_total',
    "The enrichment provider's answers by purpose (visit, lead) and outcome (company, unknown, timeout, error)",
    ['purpose', 'outcome'],
  );
  return {
    registry,
    instrument: requestMetrics(registry),
    database,
    watchDatabase(db) {
      database.watchPool(db);
      webhookBacklogMetrics(registry, db.kysely);
      agentQueueMetrics(registry, db.kysely);
    },
    webhookDelivery: (outcome) => deliveries.inc({ outcome }),
    collectorReport(outcome) {
      reports.inc(outcome === 'accepted' ? { outcome: 'accepted', reason: '' } : { outcome: 'refused', reason: outcome });
      if (outcome === 'rate_limited') refusals.inc({ plane: 'collect' });
    },
    rateLimited: (plane) => refusals.inc({ plane }),
    integrationSync: (provider, outcome) => syncs.inc({ provider, outcome }),
    agentGeneration: agentGenerationMetrics(registry),
    enrichmentAnswer: (purpose, outcome) => enrichment.inc({ purpose, outcome }),
    watchSiteDocuments: (read) => siteCacheMetrics(registry, read),
    async serve(app) {
      if (config.token !== undefined) metricsRoute(app, registry, config.token);
      if (config.port !== undefined) {
        const server = await metricsServer(registry, { ...config, port: config.port });
        app.addHook('onClose', () => server.close());
      }
    },
  };
}
