import type { FastifyReply, FastifyRequest } from 'fastify';
import { fileSrc, render, type Rendered } from '../../render/rendered.js';
import { loadView, rowsOf, type ViewOptions } from '../../render/view.js';
import { notModified, type SiteContext } from '../context.js';
import type { SiteHost } from '../hosts.js';
import type { TokenFields } from '../token.js';
import { documentCache, type DocumentCache } from './cache.js';
import { outcomeMemo, type OutcomeMemo } from './memo.js';
import { readSequenceAndLink, resolvePath, type Resolution } from './resolve.js';
import { readStamp, stampKey, type Stamp } from './stamp.js';
import { assignment } from '../../experiments/serving.js';

/** A document ready to send: its rendering, and what its view token names when it has one. */
export interface Servable {
  rendered: Rendered;
  stamp: Stamp;
  /**
   * What its view tokens name: tenant, page, audience, the link, and the path it was served at
   * (`P/<key>` of a `page_routing` link, or `/` for the home page: the session's pageUrl). One
   * object per remembered outcome, so that its part of each token is encoded once (site/token.ts).
   */
  visit: TokenFields;
}

/** `gone`: the path named an audience erased with its person (410, a page that names no one). */
export type Outcome = { kind: 'redirect'; location: string } | { kind: 'gone' } | ({ kind: 'document' } & Servable) | undefined;

/** A remembered outcome (serve/memo.ts): a document by its key in the document cache, not its bytes. */
export type Remembered =
  | { kind: 'none' }
  | { kind: 'redirect'; location: string }
  | { kind: 'gone' }
  | { kind: 'document'; key: string; stamp: Stamp; visit: TokenFields };

/** Rendered documents by everything they depend on, and on SQLite, each path's last outcome. */
export interface Documents {
  cache: DocumentCache;
  memo: OutcomeMemo<Remembered>;
}

/** The plane's documents, shared by the pages it serves and the forms it shows again with their errors. */
export function servedDocuments(context: SiteContext): Documents {
  const documents: Documents = { cache: documentCache(), memo: outcomeMemo() };
  context.observe?.watchDocuments(() => ({ cache: documents.cache.stats(), memo: documents.memo.stats() }));
  return documents;
}

/** The path part of a request URL, decoded; undefined when it does not decode (404). */
export function pathOf(rawUrl: string): string | undefined {
  const raw = rawUrl.split('?', 1)[0] ?? '/';
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/** Crawlers need absolute image URLs; tenant domains are served over TLS (docs/publishing.md). */
export const fileUrlOn = (hostname: string) => (fileId: string) => `https://${hostname}${fileSrc(fileId)}`;

/**
 * Resolves a visitor path and renders its document, from the cache when the stamp (every value the
 * document depends on) is the same as when it was rendered. `form` shows a lead form's errors; such
 * a rendering is never cached.
 */
export async function documentAt(
  context: SiteContext,
  { cache, memo }: Documents,
  host: SiteHost,
  path: string,
  options: { submitted: boolean; form?: ViewOptions['form']; visitorKey?: () => Promise<string> },
): Promise<Outcome> {
  // Read before anything else: an outcome is remembered under the version its reads saw, or an older one.
  // On SQLite that is `data_version`; elsewhere the tenant's change sequence, read with the link
  // in one statement (resolve.ts), so an unchanged path costs that statement only.
  const dataVersion = context.dataVersion?.();
  const first = dataVersion === undefined ? await readSequenceAndLink(context.db, host, path) : undefined;
  if (first && !first.domainLive) return undefined;
  const memoKey = `${host.hostname}|${path}|${options.submitted ? 1 : 0}`;
  const version = options.form ? undefined : (dataVersion ?? 0);
  const key0 = first ? `${host.tenantId}:${first.sequence}|${memoKey}` : memoKey;
  const known = version === undefined ? undefined : memo.get(version, key0);
  if (known?.kind === 'none') return undefined;
  if (known?.kind === 'redirect' || known?.kind === 'gone') return known;
  const remembered = known && cache.get(known.key);
  if (known && remembered) return { kind: 'document', rendered: remembered, stamp: known.stamp, visit: known.visit };
  const remember = (value: Remembered) => version !== undefined && memo.set(version, key0, value);

  const resolution: Resolution | undefined = await resolvePath(context.db, host, path, first ? (first.link ?? null) : undefined);
  if (!resolution) return void remember({ kind: 'none' });
  if (resolution.kind === 'redirect') {
    remember(resolution);
    return resolution;
  }
  const stamp = await readStamp(context.db, host.tenantId, resolution.pageId, resolution.audience);
  if (!stamp) return void remember({ kind: 'none' });
  if (stamp.gone) {
    remember({ kind: 'gone' });
    return { kind: 'gone' };
  }
  const assigned = await assignment(stamp, options.visitorKey);
  const inExperiment = typeof assigned === 'object' ? assigned : undefined;
  const visit: TokenFields = {
    tenantId: host.tenantId,
    pageId: stamp.pageId,
    audienceId: stamp.audienceId ?? '',
    linkId: resolution.link?.id ?? '',
    path,
    ...(inExperiment ? { experimentId: inExperiment.experimentId, arm: inExperiment.arm, unit: inExperiment.unit } : {}),
  };
  const arm = inExperiment ? `${inExperiment.experimentId}:${inExperiment.arm}` : assigned === 'control' ? 'control' : '';
  const key = `${host.hostname}|${path}|${resolution.link?.updated_at ?? ''}|${options.submitted ? 1 : 0}|${stampKey(stamp)}|${arm}`;
  // A visitor's daily key varies by visitor: its arm is chosen per request, never remembered per path.
  const rememberable = !inExperiment || inExperiment.unit.startsWith('person:');
  const cached = options.form ? undefined : cache.get(key);
  if (cached) {
    if (rememberable) remember({ kind: 'document', key, stamp, visit });
    return { kind: 'document', rendered: cached, stamp, visit };
  }
  const { page, audience } = await rowsOf(context.db, host.tenantId, stamp.pageId, stamp.audienceId);
  if (!page) return undefined;
  const view = await loadView(context.db, page, audience, {
    path,
    // The thank-you page after a lead form is the same visit, already recorded by the form: it starts no new one.
    measured: audience !== undefined && !options.submitted,
    fileSrc,
    fileUrl: fileUrlOn(host.hostname),
    form: options.form ?? (options.submitted ? { submitted: true } : undefined),
    asControl: assigned === 'control' || inExperiment?.asControl === true,
    ...(inExperiment?.versionId ? { versionId: inExperiment.versionId } : {}),
  });
  const rendered = render(view);
  // Rows newer than the stamp would be cached under a key no request asks for again: harmless, but useless.
  if (!options.form && page.updated_at === stamp.pageUpdatedAt && (audience?.updated_at ?? null) === stamp.audienceUpdatedAt) {
    cache.set(key, rendered);
    if (rememberable) remember({ kind: 'document', key, stamp, visit });
  }
  return { kind: 'document', rendered, stamp, visit };
}

/**
 * Every served document's policy (issue 25): no `<base>` to redirect its relative URLs, no
 * plugins, forms post only to this host, framed only by it. Scripts and styles are left alone:
 * the tenant's enabled scripts and the inline style must keep working. One constant string.
 */
export const DOCUMENT_CSP = "base-uri 'none'; object-src 'none'; form-action 'self'; frame-ancestors 'self'";

/** Sends a document: 304 when the visitor has it, else its bytes with a fresh view token in its slots. */
export function sendDocument(
  request: FastifyRequest,
  reply: FastifyReply,
  context: SiteContext,
  served: Servable,
  status = 200,
  token?: string,
) {
  const { rendered } = served;
  reply.header('cache-control', 'no-cache').header('etag', rendered.etag).header('content-security-policy', DOCUMENT_CSP);
  if (rendered.robots) reply.header('x-robots-tag', rendered.robots);
  if (status === 200 && notModified(request, rendered.etag)) return reply.code(304).send();
  const [first = '', ...rest] = rendered.parts;
  let body = first;
  if (rest.length > 0) {
    const value = token ?? context.tokens.sign(served.visit).token;
    for (const part of rest) body += value + part;
  }
  return reply.code(status).type('text/html; charset=utf-8').send(body);
}
