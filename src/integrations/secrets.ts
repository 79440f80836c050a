import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * The CRM credentials at rest: AES-256-GCM under a key derived from INTEGRATIONS_SECRET (or the
 * generated one kept in the database), with a fresh 96-bit nonce each time. The integration's id
 * is the additional data, so a ciphertext copied onto another integration's row does not open.
 * Stored as `v1.<nonce>.<tag>.<ciphertext>`, each part base64url.
 */
export interface Credentials {
  /** HubSpot: the private app's access token. */
  accessToken?: string;
  /** Salesforce: the connected app's consumer key and secret. */
  clientId?: string;
  clientSecret?: string;
}

export interface Sealer {
  seal(integrationId: string, credentials: Credentials): string;
  /** Undefined when the ciphertext does not open (another key, or tampered with). */
  open(integrationId: string, sealed: string): Credentials | undefined;
}

export function sealer(secret: string): Sealer {
  // Domain-separated from the other uses a kept secret might have.
  const key = createHash('sha256').update('pam integrations v1\0').update(secret).digest();
  return {
    seal(integrationId, credentials) {
      const nonce = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, nonce);
      cipher.setAAD(Buffer.from(integrationId));
      const body = Buffer.concat([cipher.update(JSON.stringify(credentials), 'utf8'), cipher.final()]);
      const parts = [nonce, cipher.getAuthTag(), body].map((b) => b.toString('base64url'));
      return `v1.${parts.join('.')}`;
    },
    open(integrationId, sealed) {
      const [version, nonce, tag, body] = sealed.split('.');
      if (version !== 'v1' || nonce === undefined || tag === undefined || body === undefined) return undefined;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
        decipher.setAAD(Buffer.from(integrationId));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        const text = Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
        return JSON.parse(text) as Credentials;
      } catch {
        return undefined;
      }
    },
  };
}
