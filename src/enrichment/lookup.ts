import { isIP } from 'node:net';
import type { Kysely } from 'kysely';
import { CACHES, newCache } from '../db/caches.js';
import type { Database } from '../db/types.js';
import { enrichmentOn } from '../site-settings/index.js';
import type { Provider } from './provider.js';
import { type Company, type CompanyLookup, noCompanies } from './visit.js';

/** What the cache keeps for a network: its company, or that none is known. */
export interface Known {
  company: Company | null;
}

/** A network whose provider failed is not asked again for this long: a failing provider costs each visitor nothing. */
export const FAILURE_KEEP_MS = 60_000;

/** The eight 16-bit groups of an IPv6 address, or undefined when it is none. */
function ipv6Groups(address: string): number[] | undefined {
  let text = address.split('%')[0] ?? '';
  // An IPv4 tail (::ffff:192.0.2.1) becomes its two groups.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4?.[1]) {
    const b = v4[1].split('.').map(Number);
    text = `${text.slice(0, -v4[1].length)}${((b[0] ?? 0) * 256 + (b[1] ?? 0)).toString(16)}:${((b[2] ?? 0) * 256 + (b[3] ?? 0)).toString(16)}`;
  }
  const [head = '', tail, extra] = text.split('::');
  if (extra !== undefined) return undefined;
  const part = (s: string) => (s === '' ? [] : s.split(':').map((g) => Number.parseInt(g, 16)));
  const front = part(head);
  const back = tail === undefined ? [] : part(tail);
  const missing = 8 - front.length - back.length;
  if (tail === undefined ? missing !== 0 : missing < 1) return undefined;
  const groups = [...front, ...Array<number>(tail === undefined ? 0 : missing).fill(0), ...back];
  return groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

/**
 * The network an address is kept under: its /24 for IPv4 (an IPv4-mapped IPv6 address counts as its
 * IPv4 one), its /48 for IPv6. Undefined for anything that is not an address.
 */
export function networkOf(address: string): string | undefined {
  const kind = isIP(address.split('%')[0] ?? '');
  if (kind === 4) return `${address.split('.').slice(0, 3).join('.')}.0/24`;
  if (kind !== 6) return undefined;
  const groups = ipv6Groups(address);
  if (!groups) return undefined;
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  if (mapped) return `${(groups[6] ?? 0) >> 8}.${(groups[6] ?? 0) & 255}.${(groups[7] ?? 0) >> 8}.0/24`;
  return `${groups
    .slice(0, 3)
    .map((g) => g.toString(16))
    .join(':')}::/48`;
}

/** The address as the provider is asked about it: an IPv4-mapped IPv6 address as its IPv4 one. */
function asked(address: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return m?.[1] ?? address;
}

/**
 * The serving-time look-up (src/enrichment/visit.ts's CompanyLookup) over a provider: nothing for
 * a tenant whose `enrichment` is off; else the company of the address's network, asked once per
 * /24 or /48 and kept 24 hours (a failure a minute), concurrent visitors of one network sharing the
 * one question. It answers within the provider's timeout and never throws. The address is used
 * here, in memory, and is neither stored nor logged; only its network is a key in memory.
 */
export function companiesByNetwork(db: Kysely<Database>, provider: Provider | undefined): CompanyLookup {
  if (!provider) return noCompanies;
  const known = newCache<Known, { address: string }>(CACHES.companies, {
    fetchMethod: async (_network, _stale, { options, context }) => {
      const answer = await provider.ask('visit', { ip: context.address });
      if (answer.outcome === 'company') return { company: answer.company };
      if (answer.outcome !== 'unknown') options.ttl = FAILURE_KEEP_MS;
      return { company: null };
    },
  });
  const answerFor = async (tenantId: string, network: string, address: string): Promise<Company | null> => {
    if (!(await enrichmentOn(db, tenantId))) return null;
    return (await known.fetch(network, { context: { address: asked(address) } }))?.company ?? null;
  };
  return async (tenantId, address) => {
    const network = networkOf(address);
    if (network === undefined) return null;
    // The timeout bounds the whole look-up, the tenant's setting read included; a question still
    // in flight then goes on, and its answer is kept for the network's next visitor.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), provider.timeoutMs);
    });
    try {
      return await Promise.race([answerFor(tenantId, network, address).catch(() => null), late]);
    } finally {
      clearTimeout(timer);
    }
  };
}
