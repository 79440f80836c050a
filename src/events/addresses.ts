import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { invalidField } from '../http/errors.js';

/**
 * Why webhooks may not go to `address` unless WEBHOOK_ALLOW_PRIVATE=true, or undefined when they
 * may: the one check for a literal address in a URL and for every address a name resolves to.
 *
 * Only what ipaddr.js calls plain `unicast` may be reached; every special range is refused
 * (loopback, private, link-local, multicast, NAT64, 6to4, Teredo, site-local, documentation...).
 * An IPv6 address that carries an IPv4 one is judged by that IPv4 address too, since a gateway, a
 * tunnel or the kernel may deliver to it.
 */
export function refusal(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  const parsed = ipaddr.parse(address);
  if (parsed instanceof ipaddr.IPv4) {
    const range = parsed.range();
    return range === 'unicast' ? undefined : `${address} is in the ${range} range`;
  }
  const range = ipv6Range(parsed);
  const carried = embeddedIPv4(parsed).find((inner) => inner.range() !== 'unicast');
  const inner = carried ? ` carrying ${carried.toString()} (${carried.range()})` : '';
  if (range !== 'unicast') return `${address} is in the ${range} range${inner}`;
  if (carried) return `${address} is an IPv6 address${inner}`;
  return undefined;
}

/**
 * For a URL whose host is a literal address, why it is refused; undefined for a name, which is
 * judged at delivery, by the addresses it has then (send.ts).
 */
export function literalRefusal(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return isIP(host) ? refusal(host) : undefined;
}

const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96');

/**
 * ipaddr.js's name for the range, except that IPv4-compatible addresses (::/96, deprecated by
 * RFC 4291) are named too: ipaddr.js reads `::8.8.8.8` as IPv4-mapped but `::808:808`, the same
 * address, as unicast, and a verdict must not depend on how the address is written.
 */
function ipv6Range(address: ipaddr.IPv6): string {
  const range = address.range();
  return range === 'unicast' && address.match(IPV4_COMPATIBLE) ? 'ipv4Compatible' : range;
}

/** The IPv4 addresses an IPv6 address may carry, by the embedding its prefix stands for. */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] {
  const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, g = 0, h = 0] = address.parts;
  const v4 = (high: number, low: number) => new ipaddr.IPv4([(high >> 8) & 0xff, high & 0xff, (low >> 8) & 0xff, low & 0xff]);
  const zeroHigh = a === 0 && b === 0 && c === 0 && d === 0;
  // :: and ::1 are named by ipaddr.js as what they are, not as carriers of 0.0.0.0 and 0.0.0.1.
  if (zeroHigh && e === 0 && f === 0 && g === 0) return [];
  // IPv4-compatible ::a.b.c.d, IPv4-mapped ::ffff:a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d
  if (zeroHigh && ((e === 0 && (f === 0 || f === 0xffff)) || (e === 0xffff && f === 0))) return [v4(g, h)];
  if (a === 0x64 && b === 0xff9b && c === 0) return [v4(g, h)]; // NAT64's well-known prefix, 64:ff9b::/96
  if (a === 0x2002) return [v4(b, c)]; // 6to4: 2002:AABB:CCDD::/48
  // Teredo (2001:0::/32): the server's address, and the client's stored with every bit flipped.
  if (a === 0x2001 && b === 0) return [v4(c, d), v4(~g, ~h)];
  return [];
}

/** What a webhook's or an alert's URL may be: WEBHOOK_ALLOW_HTTP and WEBHOOK_ALLOW_PRIVATE. */
export interface UrlRules {
  allowHttp: boolean;
  allowPrivate: boolean;
}

// Each refusal a setting lifts names it, so whoever reads it knows what the operator can change.
const HTTPS_ONLY = 'must be an https:// URL (http:// is accepted only when the operator sets WEBHOOK_ALLOW_HTTP=true, for local receivers)';
const HTTP_OR_HTTPS = 'must be an http:// or https:// URL';
const NOT_PRIVATE = 'must not point at a private or reserved address (accepted only when the operator sets WEBHOOK_ALLOW_PRIVATE=true)';

/** The rule for a subscription's URL (at /url) and an alert's Slack webhook URL (at its own pointer). */
export function checkUrl(url: string, { allowHttp, allowPrivate }: UrlRules, pointer = '/url'): void {
  // Literally the scheme, then no whitespace or control character anywhere: what is stored is
  // exactly where deliveries go, not what a lenient parser makes of it.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what this refuses
  const literal = allowHttp ? /^https?:\/\/[^\s\x00-\x1f\x7f]+$/i : /^https:\/\/[^\s\x00-\x1f\x7f]+$/i;
  if (!literal.test(url)) throw invalidField(pointer, allowHttp ? HTTP_OR_HTTPS : HTTPS_ONLY);
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  const schemes = allowHttp ? ['https:', 'http:'] : ['https:'];
  if (!parsed || !schemes.includes(parsed.protocol) || parsed.hostname === '') {
    throw invalidField(pointer, allowHttp ? HTTP_OR_HTTPS : HTTPS_ONLY);
  }
  if (parsed.username || parsed.password) throw invalidField(pointer, 'must not carry credentials');
  // A literal address is judged now, as it will be at delivery (send.ts), so the client hears of
  // it at once; a name is judged at delivery only, by the addresses it has then.
  const refused = allowPrivate ? undefined : literalRefusal(parsed);
  if (refused !== undefined) throw invalidField(pointer, `${NOT_PRIVATE}: ${refused}`);
}
