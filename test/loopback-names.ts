import dns from 'node:dns';

type Callback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

let installed = false;

/**
 * Makes every `*.localhost` name resolve to 127.0.0.1 in this process, as browsers resolve them
 * (RFC 6761), so Node's fetch reaches a listening server's tenant domains (`<slug>.pages.localhost`)
 * by their own URLs: the Host is the name, as it would be for a visitor.
 */
export function resolveLocalhostNames(): void {
  if (installed) return;
  installed = true;
  const lookup = dns.lookup;
  const patched = (hostname: string, options: unknown, callback?: Callback) => {
    const done = (typeof options === 'function' ? options : callback) as Callback;
    const opts = (typeof options === 'object' && options !== null ? options : {}) as dns.LookupOptions;
    if (!/\.localhost\.?$/i.test(hostname)) return Reflect.apply(lookup, dns, [hostname, opts, done]);
    process.nextTick(() => (opts.all ? done(null, [{ address: '127.0.0.1', family: 4 }]) : done(null, '127.0.0.1', 4)));
  };
  (dns as { lookup: unknown }).lookup = patched;
}
