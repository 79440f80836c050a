import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Preview links: `<PUBLIC_BASE_URL>/previews/<pageId>?tenantId=&audienceId=&expires=&signature=`,
 * opened without an API key, so that a browser can load a preview as a document of its own, under
 * a policy of its own (the console's iframe). The signature is an HMAC-SHA256 of the tenant, the
 * page, the audience (or none) and the expiry, under a key derived from the service secret for this
 * purpose alone (as the view token's is). Valid five minutes (docs/decisions.md).
 */
export interface PreviewLink {
  tenantId: string;
  pageId: string;
  /** Undefined: the page without an audience. */
  audienceId: string | undefined;
  /** Unix seconds, as in the link. */
  expires: string;
  signature: string;
}

export const PREVIEW_LINK_SECONDS = 300;

/** Why a link is refused: the route says it to whoever opened it. */
export type PreviewRefusal = 'forged' | 'expired';

export interface PreviewLinks {
  issue(tenantId: string, pageId: string, audienceId: string | undefined, at?: number): { url: string; expiresAt: string };
  /** Undefined for a genuine, unexpired link; else why not. */
  refusal(link: PreviewLink, at?: number): PreviewRefusal | undefined;
}

export function previewLinks(baseUrl: string, serviceSecret: string): PreviewLinks {
  const key = createHmac('sha256', serviceSecret).update('pam preview link v1').digest();
  // A JSON array: no value can run into the next, whatever characters a path parameter holds.
  const mac = (tenantId: string, pageId: string, audienceId: string | undefined, expires: string) =>
    createHmac('sha256', key)
      .update(JSON.stringify([tenantId, pageId, audienceId ?? null, expires]))
      .digest();
  return {
    issue(tenantId, pageId, audienceId, at = Date.now()) {
      const expires = String(Math.floor(at / 1000) + PREVIEW_LINK_SECONDS);
      const query = new URLSearchParams({ tenantId, ...(audienceId === undefined ? {} : { audienceId }), expires });
      query.set('signature', mac(tenantId, pageId, audienceId, expires).toString('base64url'));
      return {
        url: `${baseUrl}/previews/${encodeURIComponent(pageId)}?${query}`,
        expiresAt: new Date(Number(expires) * 1000).toISOString(),
      };
    },
    refusal({ tenantId, pageId, audienceId, expires, signature }, at = Date.now()) {
      // Compared as text: base64url has spare bits, and another spelling of the same bytes is no genuine link.
      const given = Buffer.from(signature);
      const expected = Buffer.from(mac(tenantId, pageId, audienceId, expires).toString('base64url'));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'forged';
      return Number(expires) * 1000 <= at ? 'expired' : undefined;
    },
  };
}
