import net from 'node:net';
import { ConfigError, type Env, isHostname, readInteger, readList, readString } from './read.js';

/** `GET /metrics` (Prometheus): off unless a token or a port is set. */
export interface MetricsConfig {
  /** Set: served on the API's host and port, to `Authorization: Bearer <token>` only. */
  token: string | undefined;
  /** Set: served on a port of its own, without a token, at `host`. */
  port: number | undefined;
  /** Where the metrics port listens: loopback unless said otherwise. */
  host: string;
}

export function readMetrics(env: Env, apiPort: number): MetricsConfig {
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

export function readRateLimit(env: Env): { perSecond: number; burst: number } {
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

export function readRedisUrl(env: Env): string | undefined {
  const raw = readString(env, 'REDIS_URL');
  if (raw !== undefined && !/^rediss?:\/\//i.test(raw))
    throw new ConfigError(`REDIS_URL must be a redis:// URL, got "${raw.split(':')[0]}:..."`);
  return raw;
}

export function readOrigins(env: Env): string[] {
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
export function readTrustProxy(env: Env): string[] {
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

export function readDomainSuffix(env: Env): string {
  const raw = readString(env, 'FALLBACK_DOMAIN_SUFFIX') ?? 'pages.localhost';
  if (!isHostname(raw)) throw new ConfigError(`FALLBACK_DOMAIN_SUFFIX must be a DNS name, got "${raw}"`);
  return raw.toLowerCase();
}

/**
 * Where a custom domain's own record points (the proxy in front of the visitor plane): a DNS name
 * (a CNAME to it) or an IP address (an A or AAAA record). Unset: the domain view says to point the
 * name at your proxy.
 */
export function readSiteCnameTarget(env: Env): string | undefined {
  const raw = readString(env, 'SITE_CNAME_TARGET');
  if (raw === undefined) return undefined;
  const name = raw.toLowerCase().replace(/\.$/, '');
  if (net.isIP(name) === 0 && !(isHostname(name) && name.includes('.')))
    throw new ConfigError(`SITE_CNAME_TARGET must be a DNS name (proxy.example.net) or an IP address, got "${raw}"`);
  return name;
}

/** `admin.example.com, *.internal.example.com`: exact names, or every name under a suffix. */
export function readReservedHostnames(env: Env): string[] {
  return readList(env, 'RESERVED_HOSTNAMES').map((entry) => {
    const name = entry.toLowerCase().replace(/\.$/, '');
    if (!isHostname(name.replace(/^\*\./, '')))
      throw new ConfigError(`RESERVED_HOSTNAMES must be comma-separated DNS names or *.suffix, got "${entry}"`);
    return name;
  });
}

/** `1.1.1.1, 10.0.0.53:5353, 2606:4700::1111, [::1]:5353`: the form node's dns.setServers takes. */
export function readDnsResolvers(env: Env): string[] {
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
