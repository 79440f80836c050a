// The domains area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export { createDomainChecks } from './checks.js';
export { txtLookup } from './dns.js';
export { hostnameRules, type HostnameRules, isDnsName } from './hostnames.js';
export {
  createFallbackDomain,
  type DomainWiring,
  fallbackDomainId,
  findDomain,
  findFallbackDomain,
  hostnameHeld,
  verifiedDomainNamed,
} from './repository.js';
export { domainRoutes } from './routes.js';
export { TenantDomain, TenantDomainParams } from './schemas.js';
export { releaseRefusedDomains } from './sweep.js';
export { tlsAskRoutes } from './tls.js';
export { attestDomain } from './verification.js';
