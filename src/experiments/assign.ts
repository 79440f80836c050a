import { createHash, createHmac } from 'node:crypto';
import type { StoredArm } from './rules.js';

/**
 * The arm a new unit is given: a weighted bucket of SHA-256(experimentId, unit) under the current
 * weights. It is stored at the unit's first exposure and kept after (units.ts): the bucket decides
 * only once, so a change of weights never moves a unit.
 */
export function armFor(experimentId: string, unit: string, arms: readonly Pick<StoredArm, 'key' | 'weight'>[]): string {
  const total = arms.reduce((sum, arm) => sum + arm.weight, 0);
  const digest = createHash('sha256').update(`${experimentId}\n${unit}`).digest();
  // 48 bits of the hash, far more than the at most 80,000 buckets, so the remainder's bias is nil.
  let bucket = digest.readUIntBE(0, 6) % total;
  for (const arm of arms) {
    if (bucket < arm.weight) return arm.key;
    bucket -= arm.weight;
  }
  return arms[arms.length - 1]?.key ?? '';
}

/**
 * The unit of a visitor without a person or an account: an HMAC of the site's host, the client's
 * address and user agent under today's secret. Sticky for a day; nothing in it identifies them,
 * and once the day's secret is deleted it cannot be recomputed.
 */
export function visitorKey(secret: Buffer, host: string, address: string, userAgent: string): string {
  return `v:${createHmac('sha256', secret).update(`experiment\n${host}\n${address}\n${userAgent}`).digest('base64url')}`;
}
