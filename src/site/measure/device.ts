import UAParser from 'ua-parser-js';
import { CACHES, newCache } from '../../db/caches.js';

/** The classes the collector keeps of a user agent; the user agent itself is never stored. */
export interface Device {
  deviceType: 'desktop' | 'mobile' | 'tablet';
  browser: string;
  os: string;
}

/** Longer user agents are parsed each time rather than kept: no one header can take the cache. */
const MAX_CACHED_UA = 512;

/**
 * Cache: user agent string → its classes; at most 2,000 entries and 2 MB; never invalid (a parse
 * depends on the string alone), the least recently used go first. A site's visitors share a few
 * hundred user agents, and parsing one costs more than the rest of a report's work. Module-level
 * on purpose: a pure function's memo holds nothing of any app or database, so apps may share it.
 */
const parsed = newCache<Device>(CACHES.userAgents);

const TYPES: Record<string, Device['deviceType']> = { mobile: 'mobile', wearable: 'mobile', tablet: 'tablet' };
const cut = (value: string | undefined) => (value ?? '').slice(0, 64);

export function deviceOf(userAgent: string): Device {
  const kept = parsed.get(userAgent);
  if (kept) return kept;
  const result = new UAParser(userAgent).getResult();
  const device: Device = {
    deviceType: TYPES[result.device.type ?? ''] ?? 'desktop',
    browser: cut(result.browser.name),
    os: cut(result.os.name),
  };
  if (userAgent.length <= MAX_CACHED_UA) parsed.set(userAgent, device);
  return device;
}
