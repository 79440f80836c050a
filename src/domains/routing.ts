import net from 'node:net';
import type { DomainRouting, TenantDomain, TenantDomainRecord } from './schemas.js';

/** What a custom domain's routing record points at, from SITE_CNAME_TARGET (validated in src/config). */
export type RoutingTarget = string | undefined;

/**
 * The record that sends a custom domain's visitors here, beside the TXT proof: a CNAME to the
 * operator's target, or an A/AAAA record when the target is an address. Unset, the operator has
 * not said where the proxy is, so the answer says so instead of inventing a value.
 */
export function routingOf(hostname: string, target: RoutingTarget): DomainRouting {
  if (target === undefined) {
    return {
      recordType: 'CNAME',
      name: hostname,
      value: null,
      instructions: `Point this name at your proxy: a CNAME record for ${hostname} to the proxy's host name (or an A record to its address) in front of this service.`,
    };
  }
  const family = net.isIP(target);
  const recordType = family === 4 ? 'A' : family === 6 ? 'AAAA' : 'CNAME';
  return {
    recordType,
    name: hostname,
    value: target,
    instructions: `Create a ${recordType} record for ${hostname} with the value ${target}.`,
  };
}

/** The API's answer for a domain: the stored record and, for a custom domain, its routing record. */
export const withRouting = (domain: TenantDomainRecord, target: RoutingTarget): TenantDomain => ({
  ...domain,
  routing: domain.isFallback ? null : routingOf(domain.hostname, target),
});
