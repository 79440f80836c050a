import { createHmac, timingSafeEqual } from 'node:crypto';

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const value = headers[name] ?? Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * For a webhook receiver: true when the delivery is signed by `secret` (the subscription's
 * `whsec_...`) and its `webhook-timestamp` is within `toleranceSeconds` of this clock, which also
 * bounds replays. Standard Webhooks v1: `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`,
 * keyed by the base64 decoding of the secret after `whsec_`; during a secret rotation the header
 * holds two signatures, and either one is enough.
 *
 * `rawBody` is the body exactly as received, before any JSON parsing.
 */
export function verifyWebhook(secret: string, headers: HeaderBag, rawBody: string | Uint8Array, toleranceSeconds = 300): boolean {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !signatures || !timestamp || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > toleranceSeconds) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key)
    .update(`${id}.${timestamp}.`)
    .update(typeof rawBody === 'string' ? Buffer.from(rawBody) : rawBody)
    .digest();
  return signatures.split(' ').some((candidate) => {
    const [version, signature] = candidate.split(',', 2);
    if (version !== 'v1' || signature === undefined) return false;
    const given = Buffer.from(signature, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
