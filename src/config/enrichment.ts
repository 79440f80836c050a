import { ConfigError, type Env, readInteger, readString } from './read.js';

/** The enrichment provider (docs/enrichment.md): unset, no company is ever asked about. */
export interface EnrichmentConfig {
  /** Where the protocol's POST goes. */
  url: string;
  /** Sent as `Authorization: Bearer <token>`, when set. */
  token: string | undefined;
  /** A provider's answer is waited for this long at most, at serving time and for a lead. */
  timeoutMs: number;
}

export function readEnrichment(env: Env): EnrichmentConfig | undefined {
  const url = readString(env, 'ENRICHMENT_URL');
  const token = readString(env, 'ENRICHMENT_TOKEN');
  const timeoutMs = readInteger(env, 'ENRICHMENT_TIMEOUT_MS', 150, 10, 10_000);
  if (url === undefined) {
    // A token without a provider is a half-made setting: say so rather than ignore it.
    if (token !== undefined) throw new ConfigError('ENRICHMENT_TOKEN is set but ENRICHMENT_URL is not');
    return undefined;
  }
  if (!/^https?:\/\//i.test(url) || !URL.canParse(url)) throw new ConfigError(`ENRICHMENT_URL must be an http(s) URL, got "${url}"`);
  // The token travels in a header: visible ASCII without spaces.
  if (token !== undefined && !/^[\x21-\x7e]{1,4096}$/.test(token))
    throw new ConfigError('ENRICHMENT_TOKEN must be visible ASCII characters without spaces');
  return { url, token, timeoutMs };
}
