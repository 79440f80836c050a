import { createHash } from 'node:crypto';
import type { FileVariant } from '../assets/files.js';
import { renderDocument, robotsOf, TOKEN_SLOT, type View } from './document.js';
import { frameOrigins } from './sections.js';

/**
 * A rendered document: its text around the token slots (each visit's response is these with its
 * token between them), its ETag, and its size in UTF-8.
 *
 * Text, not bytes: a string response goes out with its headers in one write, where a buffer goes
 * out as a second chunk after a copy of the parts into one buffer; measured, the string is 10–18%
 * more documents a second (docs/benchmarks-history.md, session 8).
 */
export interface Rendered {
  parts: string[];
  etag: string;
  bytes: number;
  /** The `X-Robots-Tag` it is served with, if any. */
  robots: string | undefined;
  /** Its title, as a visit's session records it. */
  title: string;
  /** The Content-Security-Policy it is served with. */
  policy: string;
}

/**
 * The policy of every served document: no `<base>`, no plugins, forms post only to this host,
 * framed only by it. Scripts and styles are left alone: the tenant's enabled scripts and the
 * inline style must keep working.
 */
export const DOCUMENT_CSP = "base-uri 'none'; object-src 'none'; form-action 'self'; frame-ancestors 'self'";

/** A document with a video frames its player, once clicked: that origin (and this one), on that document only. */
export const policyOf = (frames: string[]) =>
  frames.length === 0 ? DOCUMENT_CSP : `${DOCUMENT_CSP}; frame-src 'self' ${frames.join(' ')}`;

/** A strong ETag of the document without its token: the same for every visit of the same rendering. */
export function renderedOf(html: string, slot: string, about: Pick<Rendered, 'robots' | 'title' | 'policy'>): Rendered {
  const parts = html.split(slot);
  const hash = createHash('sha256');
  let bytes = 0;
  for (const part of parts) {
    hash.update(part, 'utf8');
    bytes += Buffer.byteLength(part);
  }
  return { parts, etag: `"${hash.digest('base64url')}"`, bytes, ...about };
}

export function render(view: View): Rendered {
  return renderedOf(renderDocument(view), TOKEN_SLOT, {
    robots: view.noindex ? robotsOf(view) : undefined,
    title: view.metadata?.title || view.page.title,
    policy: policyOf(frameOrigins(view.content)),
  });
}

/** Where a tenant's files are served on its domains (the visitor plane's file route answers there). */
export const fileSrc = (fileId: string, variant: FileVariant = 'original') =>
  `/_pam/files/${encodeURIComponent(fileId)}${variant === 'preview' ? '/preview' : ''}`;
