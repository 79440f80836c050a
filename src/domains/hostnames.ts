import net from 'node:net';
import { isHostname } from '../config.js';

/**
 * Which names a tenant may claim, and which hosts belong to the API whatever the table holds.
 * A pure module: the domain routes refuse a claim with it, the start-up sweep releases what it
 * refuses, and the visitor plane's door (site/door.ts, through site/hosts.ts) keeps the API's own hosts for the API.
 */
export interface HostnameRules {
  /** Why a tenant may not claim this (lowercase, no trailing dot) name, or undefined when it may. */
  refusal(name: string): string | undefined;
  /** A Host (lowercase, no port) that always reaches the API: its own host, any IP literal, localhost. */
  isApiHost(name: string): boolean;
}

export interface HostnameRulesConfig {
  fallbackDomainSuffix: string;
  publicBaseUrl: string;
  reservedHostnames: string[];
}

export function hostnameRules(config: HostnameRulesConfig): HostnameRules {
  const apiHost = new URL(config.publicBaseUrl).hostname.toLowerCase().replace(/^\[|\]$/g, '');
  const suffix = config.fallbackDomainSuffix;
  const exact = new Set(config.reservedHostnames.filter((r) => !r.startsWith('*.')));
  const under = config.reservedHostnames.filter((r) => r.startsWith('*.')).map((r) => r.slice(1));
  const isLocalhost = (name: string) => name === 'localhost' || name.endsWith('.localhost');

  return {
    refusal(name) {
      if (isIpLiteral(name)) return 'is an IP address; a custom domain must be a DNS name';
      if (name === suffix || name.endsWith(`.${suffix}`)) return `is under ${suffix}, where the service names tenants' fallback domains`;
      if (isLocalhost(name)) return "is localhost, which names every visitor's own machine";
      if (!isHostname(name) || !name.includes('.')) return 'is not a valid DNS name (e.g. pages.example.com)';
      if (name === apiHost) return "is the service's own host (PUBLIC_BASE_URL)";
      if (exact.has(name) || under.some((s) => name.endsWith(s))) return 'is reserved by the operator (RESERVED_HOSTNAMES)';
      return undefined;
    },
    isApiHost(name) {
      return name === apiHost || name === 'localhost' || isIpLiteral(name);
    },
  };
}

const HOST_NAME_ONLY = 'must be a host name, like go.acme.com, without a scheme, port, path or query';

/**
 * The name in what a tenant typed or pasted: a host name as it is, or the host of an `https://`
 * address with nothing after it (`https://go.acme.com/` is `go.acme.com`), read by the WHATWG URL
 * parser. Anything more (a path, query, port, credentials, another scheme) is refused, since only
 * the name is claimed; so is a host the parser had to rewrite (an international name, which a bare
 * name may not be either). Lowercased, without a trailing dot.
 */
export function claimedName(typed: string): { name: string } | { refusal: string } {
  const text = typed.trim();
  if (!text.includes('://')) {
    // An IPv6 literal has colons of its own: the rules refuse it as an address.
    const ipv6 = net.isIP(text.replace(/^\[|\]$/g, '').replace(/%.*$/, '')) === 6;
    if (/[/?#@\\]/.test(text) || (text.includes(':') && !ipv6)) return { refusal: HOST_NAME_ONLY };
    return { name: text.toLowerCase().replace(/\.$/, '') };
  }
  const url = URL.parse(text);
  if (url === null || url.protocol !== 'https:') return { refusal: HOST_NAME_ONLY };
  const bare =
    url.pathname === '/' && url.search === '' && url.hash === '' && url.port === '' && url.username === '' && url.password === '';
  if (!bare || !/^https:\/\/[^/?#]+\/?$/i.test(text)) return { refusal: HOST_NAME_ONLY };
  const name = url.hostname.replace(/\.$/, '');
  if (!text.toLowerCase().includes(name)) return { refusal: 'is not a valid DNS name (e.g. pages.example.com)' };
  return { name };
}

/**
 * An IP address in any notation a browser or resolver reads as one: v4 and v6 literals, bracketed,
 * IPv4-mapped, and the legacy IPv4 forms (`2130706433`, `0x7f.1`, `127.1`, `0177.0.0.1`). The URL
 * standard reads a host whose last label is a number (decimal, octal or 0x-hex) as IPv4, so any
 * such name counts, whether or not it parses.
 */
export function isIpLiteral(name: string): boolean {
  const bare = name.replace(/^\[|\]$/g, '');
  if (net.isIP(bare) !== 0 || bare.includes(':')) return true;
  const last = bare.replace(/\.$/, '').split('.').pop() ?? '';
  return /^(\d+|0x[0-9a-f]*)$/i.test(last);
}

/**
 * A DNS name a company's site could have (`acme.com`, `go.acme.co.uk`): labels by the house's rule,
 * at least two of them, and not an IP address in any notation. What a domain field names (a deal's
 * `accountDomain`), where the tenant claims nothing, so the operator's reservations do not apply.
 */
export function isDnsName(name: string): boolean {
  return isHostname(name) && name.includes('.') && !isIpLiteral(name);
}
