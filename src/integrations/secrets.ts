import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { AppError } from '../http/errors.js';

/**
 * The secrets the service holds for a tenant at rest (CRM credentials, a Slack alert's webhook
 * URL): AES-256-GCM under a key derived from INTEGRATIONS_SECRET (or, on SQLite, the generated one
 * kept in a file beside the data), with a fresh 96-bit nonce each time. The owning row's id is the
 * additional data, so a ciphertext copied onto another row does not open. Stored as
 * `v1.<nonce>.<tag>.<ciphertext>`, each part base64url.
 */
export interface Credentials {
  /** HubSpot: the private app's access token. */
  accessToken?: string;
  /** Salesforce: the connected app's consumer key and secret. */
  clientId?: string;
  clientSecret?: string;
}

export interface Sealer {
  /** Throws 409 `secret_not_configured` when there is no key to seal with (PostgreSQL without INTEGRATIONS_SECRET). */
  seal(id: string, credentials: Credentials): string;
  /** Undefined when the ciphertext does not open (another key, or tampered with). */
  open(id: string, sealed: string): Credentials | undefined;
  sealText(id: string, text: string): string;
  openText(id: string, sealed: string): string | undefined;
  /** Whether new secrets can be sealed: a route refuses before it does any other work when not. */
  readonly canSeal: boolean;
}

/**
 * The keys: `sealing` seals and opens; `legacy` only opens (the key an older version generated and
 * kept in the database, read on PostgreSQL without INTEGRATIONS_SECRET so that what it sealed
 * still opens, never used to seal anything new).
 */
export interface SealingKeys {
  sealing: string | undefined;
  legacy?: string | undefined;
}

// Domain-separated from the other uses a kept secret might have.
const derive = (secret: string): Buffer => createHash('sha256').update('pam integrations v1\0').update(secret).digest();

/** The refusal when nothing can be sealed: names the variable to set. */
export const secretNotConfigured = () =>
  new AppError(
    'secret_not_configured',
    'INTEGRATIONS_SECRET is not set: on PostgreSQL, credentials and alert webhook URLs are only stored encrypted under it (docs/security.md). Set INTEGRATIONS_SECRET (32+ characters) and restart.',
  );

function sealWith(key: Buffer, id: string, text: string): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(id));
  const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  const parts = [nonce, cipher.getAuthTag(), body].map((b) => b.toString('base64url'));
  return `v1.${parts.join('.')}`;
}

function openWith(key: Buffer, id: string, sealed: string): string | undefined {
  const [version, nonce, tag, body] = sealed.split('.');
  if (version !== 'v1' || nonce === undefined || tag === undefined || body === undefined) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
    decipher.setAAD(Buffer.from(id));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

export function sealer(keys: SealingKeys | string): Sealer {
  const { sealing, legacy } = typeof keys === 'string' ? { sealing: keys, legacy: undefined } : keys;
  const sealKey = sealing === undefined ? undefined : derive(sealing);
  const openKeys: Buffer[] = [];
  if (sealKey) openKeys.push(sealKey);
  if (legacy !== undefined) openKeys.push(derive(legacy));
  const sealText = (id: string, text: string) => {
    if (sealKey === undefined) throw secretNotConfigured();
    return sealWith(sealKey, id, text);
  };
  const openText = (id: string, sealed: string) => {
    for (const key of openKeys) {
      const text = openWith(key, id, sealed);
      if (text !== undefined) return text;
    }
    return undefined;
  };
  return {
    canSeal: sealKey !== undefined,
    sealText,
    openText,
    seal: (id, credentials) => sealText(id, JSON.stringify(credentials)),
    open(id, sealed) {
      const text = openText(id, sealed);
      if (text === undefined) return undefined;
      try {
        return JSON.parse(text) as Credentials;
      } catch {
        return undefined;
      }
    },
  };
}
