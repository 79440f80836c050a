import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Standard Webhooks (v1) signatures: `v1,<base64 HMAC-SHA256>` over `{id}.{timestamp}.{body}`,
 * keyed by the base64 decoding of the secret after `whsec_`. Several signatures are separated by
 * spaces (during a secret rotation, one per secret).
 */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

export function signatureHeader(secrets: string[], id: string, timestamp: number, body: string): string {
  return secrets.map((s) => sign(s, id, timestamp, body)).join(' ');
}

type Headers = Record<string, string | string[] | undefined>;

/**
 * For receivers: true when the delivery carries a valid signature by `secret` and its timestamp is
 * within `toleranceSeconds` of now (which also bounds replays).
 */
export function verifyWebhook(secret: string, headers: Headers, rawBody: string | Buffer, toleranceSeconds = 300): boolean {
  const header = (name: string) => {
    const value = headers[name] ?? headers[name.toLowerCase()];
    return Array.isArray(value) ? value[0] : value;
  };
  const id = header('webhook-id');
  const timestamp = Number(header('webhook-timestamp'));
  const signatures = header('webhook-signature');
  if (!id || !signatures || !Number.isInteger(timestamp)) return false;
  if (Math.abs(Date.now() / 1000 - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(sign(secret, id, timestamp, rawBody.toString()));
  return signatures.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
