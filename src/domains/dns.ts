import { Resolver } from 'node:dns/promises';

/** What a TXT look-up found: the expected value, or what it saw instead, said for a person. */
export type TxtCheck = { found: true } | { found: false; saw: string };

/** Looks up a name's TXT records; `DNS_RESOLVERS` or the system's servers. */
export type TxtLookup = (name: string, expected: string) => Promise<TxtCheck>;

/** A look-up gives up after this long, whatever the resolvers do. */
const TIMEOUT_MS = 5000;

/**
 * A TXT look-up through node's resolver (c-ares, not the system's getaddrinfo, which reads no TXT).
 * A record split in several strings (over 255 bytes) counts as their concatenation, as RFC 7208 does.
 */
export function txtLookup(servers: string[]): TxtLookup {
  return async (name, expected) => {
    // A resolver per look-up: cancelling one on its deadline cancels nothing else.
    const resolver = new Resolver({ timeout: TIMEOUT_MS, tries: 1 });
    if (servers.length > 0) resolver.setServers(servers);
    const deadline = setTimeout(() => resolver.cancel(), TIMEOUT_MS);
    try {
      const values = (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
      if (values.includes(expected)) return { found: true };
      return { found: false, saw: `other TXT values: ${values.map((v) => JSON.stringify(v.slice(0, 100))).join(', ')}` };
    } catch (err) {
      return { found: false, saw: describe((err as { code?: unknown }).code) };
    } finally {
      clearTimeout(deadline);
    }
  };
}

function describe(code: unknown): string {
  switch (code) {
    case 'ENOTFOUND':
      return 'NXDOMAIN (no such name)';
    case 'ENODATA':
      return 'no TXT record at that name';
    case 'ETIMEOUT':
    case 'ECANCELLED':
      return `no answer within ${TIMEOUT_MS / 1000} s (a timeout)`;
    case 'ESERVFAIL':
      return 'SERVFAIL from the resolver';
    case 'EREFUSED':
      return 'the resolver refused the query';
    case 'ECONNREFUSED':
      return 'the resolver could not be reached';
    default:
      return `a DNS error (${typeof code === 'string' ? code : 'unknown'})`;
  }
}
