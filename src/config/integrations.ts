import { ConfigError, type Env, readInteger, readString } from './read.js';

/** The CRM integrations' addresses and rhythm (src/integrations/, docs/integrations.md). */
export interface IntegrationsConfig {
  /** HUBSPOT_API_URL: base of HubSpot's API, without a trailing slash. */
  hubspotApiUrl: string;
  /** SALESFORCE_LOGIN_URL: where client-credentials tokens are asked for (the org's own address when it is Salesforce's shared login host). */
  salesforceLoginUrl: string;
  /** SALESFORCE_API_VERSION: the REST API version in every Salesforce path, `v60.0` by default. */
  salesforceApiVersion: string;
  /** CRM_SYNC_SECONDS: how long after one sync of an integration the next falls due. */
  syncSeconds: number;
  /** INTEGRATIONS_SECRET: the key the credentials are encrypted with; unset: generated once and kept in the database. */
  secret: string | undefined;
}

function readBaseUrl(env: Env, name: string, fallback: string): string {
  const raw = readString(env, name);
  if (raw === undefined) return fallback;
  if (!/^https?:\/\/[^\s]+$/i.test(raw) || !URL.canParse(raw)) throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  const url = new URL(raw);
  if (url.search || url.hash || url.username || url.password) throw new ConfigError(`${name} must be a plain base URL, got "${raw}"`);
  return raw.replace(/\/+$/, '');
}

export function readIntegrations(env: Env): IntegrationsConfig {
  const version = readString(env, 'SALESFORCE_API_VERSION') ?? 'v60.0';
  if (!/^v\d{2,3}\.\d$/.test(version)) throw new ConfigError(`SALESFORCE_API_VERSION must look like v60.0, got "${version}"`);
  const secret = readString(env, 'INTEGRATIONS_SECRET');
  if (secret !== undefined && secret.length < 32) throw new ConfigError('INTEGRATIONS_SECRET must be at least 32 characters');
  return {
    hubspotApiUrl: readBaseUrl(env, 'HUBSPOT_API_URL', 'https://api.hubapi.com'),
    salesforceLoginUrl: readBaseUrl(env, 'SALESFORCE_LOGIN_URL', 'https://login.salesforce.com'),
    salesforceApiVersion: version,
    syncSeconds: readInteger(env, 'CRM_SYNC_SECONDS', 300, 1, 86_400),
    secret,
  };
}
