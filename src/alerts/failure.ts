import type { SendResult } from '../events/index.js';

const TLS = /^(CERT_|ERR_TLS_|ERR_SSL_|DEPTH_ZERO_|SELF_SIGNED_|UNABLE_TO_)/;

/**
 * What failed when a message got no response, said for the tenant who reads an alert's messages:
 * the URL's host and what went wrong, never the addresses the host resolved to (a DNS answer says
 * something of the network the service runs in, and the system's messages carry them:
 * `connect ECONNREFUSED 10.0.0.7:443`).
 */
export function failureOf(url: string, result: SendResult): string {
  let host = 'the webhook';
  try {
    host = new URL(url).host;
  } catch {
    return 'the webhook URL is not a valid URL';
  }
  const code = result.code ?? 'ERROR';
  if (code === 'REFUSED') return `refused: ${host} is, or resolves to, an address that is not public (WEBHOOK_ALLOW_PRIVATE)`;
  if (code === 'TIMEOUT' || code === 'ETIMEDOUT') return `no answer from ${host} in time`;
  if (code === 'INVALID_URL') return 'the webhook URL is not a valid URL';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') return `${host} could not be resolved (DNS)`;
  if (code === 'ECONNREFUSED') return `${host} refused the connection`;
  if (code === 'ECONNRESET' || code === 'EPIPE') return `${host} closed the connection`;
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return `${host} is unreachable`;
  if (TLS.test(code)) return `TLS with ${host} failed (${code})`;
  return /^[A-Z0-9_]{1,40}$/.test(code) ? `the request to ${host} failed (${code})` : `the request to ${host} failed`;
}
