import { createHash } from 'node:crypto';
import { type FileVariant, variantSuffix } from '../assets/index.js';
import { QUERY_SLOT, renderDocument, robotsOf, TOKEN_SLOT, type View } from './document.js';
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
  /** What goes between `parts[i]` and `parts[i + 1]`: the visit's token, or the query of its URL. */
  slots: Slot[];
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

export type Slot = 'token' | 'query';
/** Both slots at once; split keeps the captured name between the texts. */
const SLOTS = new RegExp(`${TOKEN_SLOT}|${QUERY_SLOT}`, 'g');

/** A strong ETag of the document without its slots' values: the same for every visit of the same rendering. */
export function renderedOf(html: string, about: Pick<Rendered, 'robots' | 'title' | 'policy'>): Rendered {
  const parts: string[] = [];
  const slots: Slot[] = [];
  let from = 0;
  for (const found of html.matchAll(SLOTS)) {
    parts.push(html.slice(from, found.index));
    slots.push(found[0] === TOKEN_SLOT ? 'token' : 'query');
    from = found.index + found[0].length;
  }
  parts.push(html.slice(from));
  const hash = createHash('sha256');
  let bytes = 0;
  for (const part of parts) {
    hash.update(part, 'utf8');
    bytes += Buffer.byteLength(part);
  }
  return { parts, slots, etag: `"${hash.digest('base64url')}"`, bytes, ...about };
}

export function render(view: View): Rendered {
  return renderedOf(renderDocument(view), {
    robots: view.noindex ? robotsOf(view) : undefined,
    title: view.metadata?.title || view.page.title,
    policy: policyOf(frameOrigins(view.content)),
  });
}

/** Where a tenant's files are served on its domains (the visitor plane's file route answers there). */
export const fileSrc = (fileId: string, variant: FileVariant = 'original') =>
  `/_pam/files/${encodeURIComponent(fileId)}${variantSuffix(variant)}`;
