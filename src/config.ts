import path from 'node:path';
import { type AgentConfig, readAgent } from './config/agent.js';
import { type DatabaseConfig, parseDatabaseUrl, readPoolSize, readPreparedStatements } from './config/database.js';
import {
  type MetricsConfig,
  readDnsResolvers,
  readSiteCnameTarget,
  readDomainSuffix,
  readMetrics,
  readOrigins,
  readRateLimit,
  readRedisUrl,
  readReservedHostnames,
  readTrustProxy,
} from './config/network.js';
import { type EnrichmentConfig, readEnrichment } from './config/enrichment.js';
import { ConfigError, type Env, readBoolean, readInteger, readString } from './config/read.js';
import { readWebhooks, type WebhookDelivery } from './config/webhooks.js';
import { type IntegrationsConfig, readIntegrations } from './config/integrations.js';

// Importers take every setting's type and reader from here; src/config/ holds them by area.
export { AGENT_GENERATORS, type AgentConfig, type AgentGeneratorName, type OpenAiConfig } from './config/agent.js';
export { DEFAULT_SQLITE_PATH, type DatabaseConfig, forBulkWork, parseDatabaseUrl } from './config/database.js';
export type { MetricsConfig } from './config/network.js';
export type { EnrichmentConfig } from './config/enrichment.js';
export { ConfigError, isHostname } from './config/read.js';
export type { WebhookDelivery } from './config/webhooks.js';
export type { IntegrationsConfig } from './config/integrations.js';

export interface Config {
  port: number;
  host: string;
  database: DatabaseConfig;
  logLevel: LogLevel;
  /** Unset: the admin API is off. */
  adminToken: string | undefined;
  bootstrapApiKey: string | undefined;
  /** Maximum accepted JSON request body, in bytes. */
  bodyLimit: number;
  /** Where local state lives: the SQLite file's folder, or ./data on PostgreSQL. */
  dataDir: string;
  /** Base of the absolute URLs the service hands out (signed download links). */
  publicBaseUrl: string;
  /** SITE_URL_SCHEME: the scheme of every tenant page's public address, whatever a request says; unset: by the rule (http/public-origin.ts). */
  siteUrlScheme: SiteUrlScheme | undefined;
  /** Key of the download links' signatures; unset: generated once and kept in the database. */
  fileUrlSecret: string | undefined;
  /** Where uploaded bytes are kept: the data folder, or the database (shared by every instance). */
  fileStore: FileStoreName;
  /** Each tenant's fallback hostname is `<tenant slug>.<suffix>`. */
  fallbackDomainSuffix: string;
  /** Names no tenant may claim: exact names, or `*.suffix` for every name under a suffix. */
  reservedHostnames: string[];
  /** What a custom domain's CNAME (or A/AAAA record) points at; unset: "point this name at your proxy". */
  siteCnameTarget: string | undefined;
  /** `address[:port]` of the DNS servers that domain verification asks; empty: the system's. */
  dnsResolvers: string[];
  /** Allow http:// webhook URLs (for local receivers); https:// only otherwise. */
  webhookAllowHttp: boolean;
  webhooks: WebhookDelivery;
  rateLimit: { perSecond: number; burst: number };
  /** Set: rate-limit buckets live in Redis, shared by every instance. */
  redisUrl: string | undefined;
  /** Origins allowed by CORS; empty: CORS is off. */
  corsOrigins: string[];
  /** Addresses and CIDRs of the reverse proxies whose `X-Forwarded-For` is believed (visitor plane). */
  trustProxy: string[];
  /** Reports a visitor's address may send to the collector a minute (its token bucket). */
  collectRatePerMinute: number;
  /** Lead forms a visitor's address may post a minute (its token bucket). */
  formRatePerMinute: number;
  /** Site script decisions (`GET /_pam/decide`) a visitor's address, and a site, may ask a minute (issue 48). */
  decideRatePerMinute: number;
  decideSiteRatePerMinute: number;
  /** Seconds after a visit's last report that its `session.ended` falls due (a minute once the page is left). */
  sessionIdleSeconds: number;
  agent: AgentConfig;
  metrics: MetricsConfig;
  /** The CRM integrations (issue 40). */
  integrations: IntegrationsConfig;
  /** The enrichment provider (ENRICHMENT_URL); unset: none. */
  enrichment: EnrichmentConfig | undefined;
}

/** Where uploaded bytes may be kept; each file row names the one that holds its bytes. */
export const FILE_STORES = ['disk', 'database'] as const;
export type FileStoreName = (typeof FILE_STORES)[number];
const isFileStore = (value: string): value is FileStoreName => (FILE_STORES as readonly string[]).includes(value);

/** The schemes a tenant page's public address may be forced to (SITE_URL_SCHEME). */
export const SITE_URL_SCHEMES = ['https', 'http'] as const;
export type SiteUrlScheme = (typeof SITE_URL_SCHEMES)[number];

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Reads and validates the environment once; everything else receives the result. */
export function loadConfig(env: Env = process.env): Config {
  const port = readPort(env);
  const host = readString(env, 'HOST') ?? '127.0.0.1';
  const database = parseDatabaseUrl(readString(env, 'DATABASE_URL'), readPoolSize(env), readPreparedStatements(env));
  return {
    port,
    host,
    database,
    logLevel: readLogLevel(env),
    adminToken: readString(env, 'ADMIN_TOKEN'),
    bootstrapApiKey: readBootstrapKey(env),
    bodyLimit: 1024 * 1024,
    dataDir: database.kind === 'sqlite' ? path.dirname(database.path) : 'data',
    publicBaseUrl: readBaseUrl(env, host, port),
    siteUrlScheme: readSiteUrlScheme(env),
    fileUrlSecret: readFileUrlSecret(env),
    fileStore: readFileStore(env, database.kind),
    fallbackDomainSuffix: readDomainSuffix(env),
    reservedHostnames: readReservedHostnames(env),
    siteCnameTarget: readSiteCnameTarget(env),
    dnsResolvers: readDnsResolvers(env),
    webhookAllowHttp: readBoolean(env, 'WEBHOOK_ALLOW_HTTP', false),
    webhooks: readWebhooks(env),
    rateLimit: readRateLimit(env),
    redisUrl: readRedisUrl(env),
    corsOrigins: readOrigins(env),
    trustProxy: readTrustProxy(env),
    collectRatePerMinute: readInteger(env, 'COLLECT_RATE_PER_MINUTE', 60, 1, 1_000_000),
    formRatePerMinute: readInteger(env, 'FORM_RATE_PER_MINUTE', 10, 1, 1_000_000),
    decideRatePerMinute: readInteger(env, 'DECIDE_RATE_PER_MINUTE', 120, 1, 10_000_000),
    decideSiteRatePerMinute: readInteger(env, 'DECIDE_SITE_RATE_PER_MINUTE', 60_000, 1, 100_000_000),
    sessionIdleSeconds: readInteger(env, 'SESSION_IDLE_SECONDS', 1800, 1, 86_400),
    agent: readAgent(env),
    metrics: readMetrics(env, port),
    integrations: readIntegrations(env),
    enrichment: readEnrichment(env),
  };
}

function readBaseUrl(env: Env, host: string, port: number): string {
  const raw = readString(env, 'PUBLIC_BASE_URL');
  if (raw === undefined) return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (!/^https?:\/\//i.test(raw) || !URL.canParse(raw)) throw new ConfigError(`PUBLIC_BASE_URL must be an http(s) URL, got "${raw}"`);
  return raw.replace(/\/+$/, '');
}

function readSiteUrlScheme(env: Env): SiteUrlScheme | undefined {
  const raw = readString(env, 'SITE_URL_SCHEME');
  if (raw === undefined) return undefined;
  const scheme = SITE_URL_SCHEMES.find((s) => s === raw.trim().toLowerCase());
  if (!scheme) throw new ConfigError(`SITE_URL_SCHEME must be ${SITE_URL_SCHEMES.join(' or ')}, got "${raw}"`);
  return scheme;
}

function readFileUrlSecret(env: Env): string | undefined {
  const raw = readString(env, 'FILE_URL_SECRET');
  if (raw !== undefined && raw.length < 32) throw new ConfigError('FILE_URL_SECRET must be at least 32 characters');
  return raw;
}

function readFileStore(env: Env, kind: DatabaseConfig['kind']): FileStoreName {
  const raw = readString(env, 'FILE_STORE');
  if (raw === undefined) return kind === 'sqlite' ? 'disk' : 'database';
  if (!isFileStore(raw)) throw new ConfigError(`FILE_STORE must be ${FILE_STORES.join(' or ')}, got "${raw}"`);
  return raw;
}

function readPort(env: Env): number {
  const raw = readString(env, 'PORT');
  if (raw === undefined) return 3000;
  const port = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || port > 65535) {
    throw new ConfigError(`PORT must be an integer from 0 to 65535, got "${raw}"`);
  }
  return port;
}

function readLogLevel(env: Env): LogLevel {
  const raw = readString(env, 'LOG_LEVEL');
  if (raw === undefined) return 'info';
  const level = LOG_LEVELS.find((l) => l === raw.trim().toLowerCase());
  if (!level) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${raw}"`);
  return level;
}

function readBootstrapKey(env: Env): string | undefined {
  const raw = readString(env, 'BOOTSTRAP_API_KEY');
  if (raw === undefined) return undefined;
  // The key travels in an HTTP header, so it must be visible ASCII without spaces.
  if (!/^[\x21-\x7e]{20,256}$/.test(raw)) {
    throw new ConfigError('BOOTSTRAP_API_KEY must be 20 to 256 visible ASCII characters without spaces');
  }
  return raw;
}
