import net from 'node:net';
import path from 'node:path';

export type DatabaseConfig =
  | { kind: 'sqlite'; path: string }
  /** `unboundedQueries`: no 2.5 s limit on a query (migrations, bulk loads); the service keeps it. */
  | { kind: 'postgres'; url: string; poolSize: number; unboundedQueries?: boolean };

/**
 * The same database for bulk work (migrations, loads, maintenance): no limit on a query's time.
 * (A pool opens connections as they are asked for: a migration still uses one.)
 */
export function forBulkWork(config: DatabaseConfig): DatabaseConfig {
  return config.kind === 'postgres' ? { ...config, unboundedQueries: true } : config;
}

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
  /** Key of the download links' signatures; unset: generated once and kept in the database. */
  fileUrlSecret: string | undefined;
  /** Where uploaded bytes are kept: the data folder, or the database (shared by every instance). */
  fileStore: FileStoreName;
  /** Each tenant's fallback hostname is `<tenant slug>.<suffix>`. */
  fallbackDomainSuffix: string;
  /** Names no tenant may claim: exact names, or `*.suffix` for every name under a suffix. */
  reservedHostnames: string[];
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
  agent: AgentConfig;
  metrics: MetricsConfig;
}

/** `GET /metrics` (Prometheus): off unless a token or a port is set. */
export interface MetricsConfig {
  /** Set: served on the API's host and port, to `Authorization: Bearer <token>` only. */
  token: string | undefined;
  /** Set: served on a port of its own, without a token, at `host`. */
  port: number | undefined;
  /** Where the metrics port listens: loopback unless said otherwise. */
  host: string;
}

/** The page agent (src/agent/, docs/agent.md). */
export interface AgentConfig {
  /** Run the worker in this process. */
  enabled: boolean;
  /** Generations at once in this process (for a generator that waits on the network). */
  concurrency: number;
  generator: AgentGeneratorName;
  /** How long one generation may take; the claim's lease outlives it. */
  timeoutMs: number;
  /** The most characters a generator's prompt may have. */
  maxPromptChars: number;
  /** Set when `generator` is `openai`. */
  openai: OpenAiConfig | undefined;
}

export interface OpenAiConfig {
  /** Any OpenAI-compatible Chat Completions endpoint (OpenAI, vLLM, Ollama, LiteLLM). */
  baseUrl: string;
  /** Never logged, never in an error or a failureReason. */
  apiKey: string | undefined;
  model: string;
}

export const AGENT_GENERATORS = ['template', 'openai'] as const;
export type AgentGeneratorName = (typeof AGENT_GENERATORS)[number];
const isGenerator = (value: string): value is AgentGeneratorName => (AGENT_GENERATORS as readonly string[]).includes(value);

export interface WebhookDelivery {
  /** Run the dispatcher in this process. */
  enabled: boolean;
  /** Deliver to loopback, private, link-local and multicast addresses too. */
  allowPrivate: boolean;
  /** Delays before each retry, in milliseconds. */
  retryScheduleMs: number[];
  timeoutMs: number;
  maxInFlight: number;
  maxInFlightPerSubscription: number;
}

/** Where uploaded bytes may be kept; each file row names the one that holds its bytes. */
export const FILE_STORES = ['disk', 'database'] as const;
export type FileStoreName = (typeof FILE_STORES)[number];
const isFileStore = (value: string): value is FileStoreName => (FILE_STORES as readonly string[]).includes(value);

const DEFAULT_RETRY_SCHEDULE_S = [5, 300, 1800, 7200, 18000, 36000, 36000];

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const DEFAULT_SQLITE_PATH = path.join('data', 'pam.sqlite');

/** Thrown for a bad environment; its message is the one line shown to the operator. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

/** Reads and validates the environment once; everything else receives the result. */
export function loadConfig(env: Env = process.env): Config {
  const port = readPort(env);
  const host = readString(env, 'HOST') ?? '127.0.0.1';
  const database = parseDatabaseUrl(readString(env, 'DATABASE_URL'), readPoolSize(env));
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
    fileUrlSecret: readFileUrlSecret(env),
    fileStore: readFileStore(env, database.kind),
    fallbackDomainSuffix: readDomainSuffix(env),
    reservedHostnames: readReservedHostnames(env),
    dnsResolvers: readDnsResolvers(env),
    webhookAllowHttp: readBoolean(env, 'WEBHOOK_ALLOW_HTTP', false),
    webhooks: {
      enabled: readBoolean(env, 'WEBHOOK_DISPATCHER', true),
      allowPrivate: readBoolean(env, 'WEBHOOK_ALLOW_PRIVATE', false),
      retryScheduleMs: readSchedule(env),
      timeoutMs: readInteger(env, 'WEBHOOK_TIMEOUT_MS', 15_000, 100, 600_000),
      maxInFlight: readInteger(env, 'WEBHOOK_MAX_IN_FLIGHT', 100, 1, 10_000),
      maxInFlightPerSubscription: readInteger(env, 'WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION', 10, 1, 1000),
    },
    rateLimit: readRateLimit(env),
    redisUrl: readRedisUrl(env),
    corsOrigins: readOrigins(env),
    trustProxy: readTrustProxy(env),
    collectRatePerMinute: readInteger(env, 'COLLECT_RATE_PER_MINUTE', 60, 1, 1_000_000),
    formRatePerMinute: readInteger(env, 'FORM_RATE_PER_MINUTE', 10, 1, 1_000_000),
    agent: readAgent(env),
    metrics: readMetrics(env, port),
  };
}

function readAgent(env: Env): AgentConfig {
  const generator = readString(env, 'AGENT_GENERATOR')?.trim() ?? 'template';
  if (!isGenerator(generator)) throw new ConfigError(`AGENT_GENERATOR must be ${AGENT_GENERATORS.join(' or ')}, got "${generator}"`);
  return {
    enabled: readBoolean(env, 'AGENT', true),
    concurrency: readInteger(env, 'AGENT_CONCURRENCY', 4, 1, 1000),
    generator,
    timeoutMs: readInteger(env, 'AGENT_TIMEOUT_MS', 60_000, 100, 3_600_000),
    maxPromptChars: readInteger(env, 'AGENT_MAX_PROMPT_CHARS', 48_000, 2000, 10_000_000),
    openai: generator === 'openai' ? readOpenAi(env) : undefined,
  };
}

function readOpenAi(env: Env): OpenAiConfig {
  const baseUrl = readString(env, 'AGENT_OPENAI_BASE_URL')?.trim() ?? 'https://api.openai.com/v1';
  if (!/^https?:\/\//i.test(baseUrl) || !URL.canParse(baseUrl))
    throw new ConfigError(`AGENT_OPENAI_BASE_URL must be an http(s) URL, got "${baseUrl.split(':')[0]}:..."`);
  const model = readString(env, 'AGENT_OPENAI_MODEL')?.trim();
  if (model === undefined) throw new ConfigError('AGENT_OPENAI_MODEL must be set when AGENT_GENERATOR is openai');
  // The key itself is never echoed, not even in this message.
  const apiKey = readString(env, 'AGENT_OPENAI_API_KEY');
  if (apiKey !== undefined && !/^[\x21-\x7e]+$/.test(apiKey))
    throw new ConfigError('AGENT_OPENAI_API_KEY must be visible ASCII without spaces');
  return { baseUrl: baseUrl.replace(/\/+$/, ''), apiKey, model };
}

function readMetrics(env: Env, apiPort: number): MetricsConfig {
  const token = readString(env, 'METRICS_TOKEN');
  // The token travels in an HTTP header: visible ASCII without spaces, and long enough not to be guessed.
  if (token !== undefined && !/^[\x21-\x7e]{16,256}$/.test(token))
    throw new ConfigError('METRICS_TOKEN must be 16 to 256 visible ASCII characters without spaces');
  const port = readString(env, 'METRICS_PORT') === undefined ? undefined : readInteger(env, 'METRICS_PORT', 0, 1, 65535);
  if (port !== undefined && port === apiPort) throw new ConfigError(`METRICS_PORT must differ from PORT (${apiPort})`);
  const host = readString(env, 'METRICS_HOST') ?? '127.0.0.1';
  if (net.isIP(host) === 0 && host !== 'localhost') throw new ConfigError(`METRICS_HOST must be an IP address, got "${host}"`);
  return { token, port, host };
}

function readRateLimit(env: Env): { perSecond: number; burst: number } {
  const perSecond = readInteger(env, 'RATE_LIMIT_PER_SECOND', 100, 1, 10_000_000);
  const burst = readInteger(
    env,
    'RATE_LIMIT_BURST',
    readString(env, 'RATE_LIMIT_PER_SECOND') === undefined ? 200 : perSecond * 2,
    1,
    20_000_000,
  );
  return { perSecond, burst };
}

function readRedisUrl(env: Env): string | undefined {
  const raw = readString(env, 'REDIS_URL');
  if (raw !== undefined && !/^rediss?:\/\//i.test(raw))
    throw new ConfigError(`REDIS_URL must be a redis:// URL, got "${raw.split(':')[0]}:..."`);
  return raw;
}

function readOrigins(env: Env): string[] {
  const raw = readString(env, 'CORS_ORIGINS');
  if (raw === undefined) return [];
  const origins = raw
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  for (const origin of origins) {
    if (!/^https?:\/\/[^/\s]+$/i.test(origin))
      throw new ConfigError(`CORS_ORIGINS must be comma-separated origins like https://app.example.com, got "${origin}"`);
  }
  return origins;
}

/** `10.0.0.1, 10.1.0.0/16, ::1`: each an IP address or a CIDR block. */
function readTrustProxy(env: Env): string[] {
  const raw = readString(env, 'TRUST_PROXY');
  if (raw === undefined) return [];
  const entries = raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const [address = '', prefix, extra] = entry.split('/');
    const family = net.isIP(address);
    const bits = family === 4 ? 32 : 128;
    const goodPrefix = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
    if (family === 0 || !goodPrefix || extra !== undefined)
      throw new ConfigError(`TRUST_PROXY must be comma-separated IP addresses or CIDRs like 10.0.0.0/8, got "${entry}"`);
  }
  return entries;
}

function readInteger(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = readString(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || value < min || value > max)
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  return value;
}

/** Seconds between attempts, comma-separated (decimals allowed, so tests can shorten it). */
function readSchedule(env: Env): number[] {
  const raw = readString(env, 'WEBHOOK_RETRY_SCHEDULE');
  if (raw === undefined) return DEFAULT_RETRY_SCHEDULE_S.map((s) => s * 1000);
  const parts = raw.split(',').map((p) => p.trim());
  if (parts.length === 0 || parts.length > 50 || !parts.every((p) => /^\d+(\.\d+)?$/.test(p))) {
    throw new ConfigError(`WEBHOOK_RETRY_SCHEDULE must be comma-separated seconds, e.g. 5,300,1800, got "${raw}"`);
  }
  return parts.map((p) => Math.round(Number(p) * 1000));
}

function readBaseUrl(env: Env, host: string, port: number): string {
  const raw = readString(env, 'PUBLIC_BASE_URL');
  if (raw === undefined) return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (!/^https?:\/\//i.test(raw) || !URL.canParse(raw)) throw new ConfigError(`PUBLIC_BASE_URL must be an http(s) URL, got "${raw}"`);
  return raw.replace(/\/+$/, '');
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

function readDomainSuffix(env: Env): string {
  const raw = readString(env, 'FALLBACK_DOMAIN_SUFFIX') ?? 'pages.localhost';
  if (!isHostname(raw)) throw new ConfigError(`FALLBACK_DOMAIN_SUFFIX must be a DNS name, got "${raw}"`);
  return raw.toLowerCase();
}

/** `admin.example.com, *.internal.example.com`: exact names, or every name under a suffix. */
function readReservedHostnames(env: Env): string[] {
  return readList(env, 'RESERVED_HOSTNAMES').map((entry) => {
    const name = entry.toLowerCase().replace(/\.$/, '');
    if (!isHostname(name.replace(/^\*\./, '')))
      throw new ConfigError(`RESERVED_HOSTNAMES must be comma-separated DNS names or *.suffix, got "${entry}"`);
    return name;
  });
}

/** `1.1.1.1, 10.0.0.53:5353, 2606:4700::1111, [::1]:5353`: the form node's dns.setServers takes. */
function readDnsResolvers(env: Env): string[] {
  return readList(env, 'DNS_RESOLVERS').map((entry) => {
    const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(entry);
    const v4WithPort = /^([\d.]+):(\d{1,5})$/.exec(entry);
    const [address, port] = bracketed
      ? [bracketed[1] ?? '', bracketed[2]]
      : v4WithPort
        ? [v4WithPort[1] ?? '', v4WithPort[2]]
        : [entry, undefined];
    const family = net.isIP(address);
    const goodPort = port === undefined || (Number(port) >= 1 && Number(port) <= 65535);
    if (family === 0 || !goodPort || (bracketed && family !== 6) || (v4WithPort && family !== 4))
      throw new ConfigError(
        `DNS_RESOLVERS must be comma-separated IP addresses, each with an optional port (1.1.1.1:53, [::1]:53), got "${entry}"`,
      );
    return entry;
  });
}

function readList(env: Env, name: string): string[] {
  return (readString(env, name) ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
}

function readBoolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = readString(env, name);
  if (raw === undefined) return fallback;
  if (/^(true|1|yes)$/i.test(raw)) return true;
  if (/^(false|0|no)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/** A DNS name: dot-separated labels of letters, digits and inner hyphens, 253 characters at most. */
export function isHostname(value: string): boolean {
  return value.length <= 253 && /^(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))*$/i.test(value);
}

/** Empty strings count as unset, as most shells and env files write "unset" that way. */
function readString(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value;
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

function readPoolSize(env: Env): number {
  const raw = readString(env, 'DATABASE_POOL_SIZE');
  if (raw === undefined) return 10;
  const size = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || size < 1 || size > 1000) {
    throw new ConfigError(`DATABASE_POOL_SIZE must be an integer from 1 to 1000, got "${raw}"`);
  }
  return size;
}

export function parseDatabaseUrl(raw: string | undefined, poolSize = 10): DatabaseConfig {
  if (raw === undefined) return { kind: 'sqlite', path: DEFAULT_SQLITE_PATH };
  const value = raw.trim();
  if (/^postgres(ql)?:\/\//i.test(value)) {
    if (!URL.canParse(value)) throw new ConfigError('DATABASE_URL is not a valid postgres:// URL');
    return { kind: 'postgres', url: value, poolSize };
  }
  if (/^sqlite:/i.test(value)) {
    const file = value.replace(/^sqlite:(\/\/)?/i, '');
    if (file === '') throw new ConfigError('DATABASE_URL "sqlite:" needs a file path, e.g. sqlite:./data/pam.sqlite');
    return { kind: 'sqlite', path: file };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    throw new ConfigError(`DATABASE_URL must be sqlite:PATH, a file path or postgres://..., got "${value.split(':')[0]}:..."`);
  }
  return { kind: 'sqlite', path: value };
}
