import type { Kysely } from 'kysely';
import { findAudience } from '../audiences/repository.js';
import type { Database } from '../db/types.js';
import { findFallbackDomain } from '../domains/repository.js';
import { findPage } from '../pages/repository.js';
import { documentStyles } from './document.js';
import { fileSrc, render } from './rendered.js';
import { loadView } from './view.js';

/** The page and, when one is named, its audience; `audience: false`: the audience is not one of the page's. */
async function subject(db: Kysely<Database>, tenantId: string, pageId: string, audienceId: string | undefined) {
  const page = await findPage(db, tenantId, pageId);
  if (!page) return undefined;
  const audience = audienceId === undefined ? undefined : await findAudience(db, tenantId, pageId, audienceId);
  if (audienceId !== undefined && !audience) return { audience: false as const };
  return { audience: true as const, page, found: audience };
}

/** Whether there is something to preview, without rendering it: what a preview link is issued for. */
export async function previewExists(db: Kysely<Database>, tenantId: string, pageId: string, audienceId: string | undefined) {
  const found = await subject(db, tenantId, pageId, audienceId);
  return found && { audience: found.audience };
}

/**
 * The document a visitor would get for the page and audience, for any page status: without the
 * measuring script or a view token (a preview is no visit), and never to be indexed. Its images
 * come from the tenant's fallback domain, where the files are served. Undefined: no such page;
 * `audience: false`: the audience is not one of the page's. `styles`: the texts of its `<style>`
 * elements, for a policy that allows exactly them.
 */
export async function previewDocument(db: Kysely<Database>, tenantId: string, pageId: string, audienceId: string | undefined) {
  const found = await subject(db, tenantId, pageId, audienceId);
  if (!found) return undefined;
  if (!found.audience) return { audience: false as const };
  const domain = await findFallbackDomain(db, tenantId);
  const origin = domain ? `https://${domain.hostname}` : '';
  const view = await loadView(db, found.page, found.found, {
    path: '/',
    measured: false,
    preview: true,
    fileSrc: (fileId) => `${origin}${fileSrc(fileId)}`,
    fileUrl: (fileId) => `${origin}${fileSrc(fileId)}`,
  });
  return { audience: true as const, html: render(view).parts.join(''), styles: documentStyles(view) };
}
