// geoip-country ships no types; the collector uses its lookup only (src/site/measure/country.ts).
declare module 'geoip-country' {
  const geoip: { lookup(address: string): { country?: string } | null };
  export default geoip;
}
