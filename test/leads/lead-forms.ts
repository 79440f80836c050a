import type { TestApp } from '../helpers.js';
import { audienceOf, link, publishedPage, unique, visit } from '../site/serve-helpers.js';

// What the lead tests share: a published page with a lead form on a path of its own, and a visitor
// who is served that page and posts its form.

export const FORM_ACTION = { purpose: 'lead', buttonTitle: 'Send', actionType: 'form', url: '' };

/** A published page with a lead form, served at a fresh path for an audience (of no person unless told). */
export async function formPage(t: TestApp, audience: Record<string, unknown> = {}, prefix = 'lead') {
  const page = await publishedPage(t, { actions: [FORM_ACTION] });
  const a = await audienceOf(t, page.pageId, audience);
  const path = unique(prefix);
  await link(t, path, { targetType: 'audience', audienceId: a.audienceId });
  return { page, audience: a, path };
}

/**
 * Serves the page to a new visitor and posts its form, each visitor from an address of its own in
 * the /16 `network` (e.g. "203.0"), starting at its third octet `from`.
 */
export function formPoster(t: TestApp, host: string, network: string, from: number) {
  let next = 1;
  return async (path: string, fields: Record<string, string>) => {
    const html = (await visit(t, host, path)).body as string;
    const hidden = (name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html)?.[1] ?? '';
    const k = next++;
    return visit(t, host, '/_pam/forms', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ token: hidden('token'), action: hidden('action'), path: hidden('path'), ...fields }).toString(),
      remoteAddress: `${network}.${from + Math.floor(k / 250)}.${(k % 250) + 1}`,
    });
  };
}
