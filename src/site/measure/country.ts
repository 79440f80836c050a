import net from 'node:net';

interface GeoIp {
  lookup(address: string): { country?: string } | null;
}

/** The geoip-country database (MaxMind GeoLite2 Country, shipped in the npm package), loaded on first use. */
let loading: Promise<GeoIp> | undefined;

/** ISO 3166-1 alpha-2 of an address; '' when unknown (private addresses, or not in the database). */
export async function countryOf(address: string): Promise<string> {
  if (net.isIP(address) === 0) return '';
  loading ??= import('geoip-country').then((m) => (m.default ?? m) as GeoIp);
  const found = (await loading).lookup(address);
  const code = found?.country ?? '';
  return /^[A-Z]{2}$/.test(code) ? code : '';
}
