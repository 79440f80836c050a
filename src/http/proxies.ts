import net from 'node:net';

// The reverse proxies of TRUST_PROXY, and what is believed of a request that came through one:
// the visitor plane's client address (its rate limits, its visitor keys) and a tenant page's scheme
// (public-origin.ts).

/**
 * Who a visitor request counts as, for its rate limit only (the address is never stored): the
 * socket's address, unless that is a trusted reverse proxy, then the right-most address of
 * `X-Forwarded-For` that is not one. Everything left of it was written by the client and could be
 * anything, so it is never believed.
 */
export function clientAddress(
  trusted: net.BlockList | undefined,
  socketAddress: string | undefined,
  forwardedFor: string | string[] | undefined,
): string {
  const socket = plain(socketAddress ?? '');
  if (!trusted || !isTrusted(trusted, socket)) return socket;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : (forwardedFor ?? ''))
    .split(',')
    .map((hop) => plain(hop.trim()))
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i] as string;
    if (!isTrusted(trusted, hop)) return hop;
  }
  // Only proxies all the way: the left-most is as close to the client as anyone says.
  return hops[0] ?? socket;
}

/** Whether the request came straight from one of the trusted proxies. */
export function fromTrustedProxy(trusted: net.BlockList | undefined, socketAddress: string | undefined): boolean {
  return trusted !== undefined && isTrusted(trusted, plain(socketAddress ?? ''));
}

/** The configured `TRUST_PROXY` entries (validated in config.ts) as one list; undefined when none. */
export function trustedProxies(entries: string[]): net.BlockList | undefined {
  if (entries.length === 0) return undefined;
  const list = new net.BlockList();
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/');
    const type = net.isIPv6(address) ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  return list;
}

export function isTrusted(list: net.BlockList, address: string): boolean {
  const family = net.isIP(address);
  return family !== 0 && list.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** `::ffff:10.0.0.1` is the IPv4 address it carries; a port-suffixed `1.2.3.4:5678` is its address. */
export function plain(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1] as string;
  const withPort = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(address);
  if (withPort) return withPort[1] as string;
  const bracketed = /^\[([0-9a-f:.]+)\](?::\d+)?$/i.exec(address);
  if (bracketed) return bracketed[1] as string;
  return address.slice(0, 64);
}
