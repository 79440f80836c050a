import type { FastifyReply, FastifyRequest } from 'fastify';
import { attr } from '../../render/html.js';
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
import { matchSegment, type PageSegments, readPageSegments } from './segments.js';
import type { VisitFacts } from './visit.js';
import { stickyArm } from '../../experiments/units.js';
import { findAudience } from '../../audiences/repository.js';

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
  /** Another visitor of the same URL may get another document (segments, visit tokens): never for a shared cache. */
  varies?: boolean;
}

/** `gone`: the path named an audience erased with its person (410, a page that names no one). */
export type Outcome = { kind: 'redirect'; location: string } | { kind: 'gone' } | ({ kind: 'document' } & Servable) | undefined;

/** A path that resolved to a page for everyone (link to the page, or the home page). */
type PageResolution = Extract<Resolution, { kind: 'page' }>;

/** A remembered outcome (serve/memo.ts): a document by its key in the document cache, not its bytes. */
export type Remembered =
  | { kind: 'none' }
  | { kind: 'redirect'; location: string }
  | { kind: 'gone' }
  /** A path to a page that has segments: each visit is matched, then its variant is remembered on its own. */
  | { kind: 'segmented'; resolution: PageResolution; segments: PageSegments }
  | {
      kind: 'document';
      /** The document cache key, before the values of `tokens`. */
      key: string;
      stamp: Stamp;
      visit: TokenFields;
      /** The visit tokens the rendering used, sorted: their values end its cache key. */
      tokens: readonly string[];
      varies: boolean;
      /** Whether the tenant's segments read a company: only then does `{{company.*}}` ask the provider. */
      company: boolean;
    };

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

/** A kept query is at most this long: a longer one is left out of the form's path (the path still works). */
const MAX_KEPT_QUERY = 2048;

/**
 * The query a visitor's URL had, as the lead form keeps it (`?a=b&c=d`, or ''): re-encoded, so
 * that it is safe in a Location header, without the thank-you's own `submitted` marker.
 */
export function keptQuery(search: string): string {
  const params = new URLSearchParams(search);
  params.delete('submitted');
  const kept = params.toString();
  return kept === '' || kept.length > MAX_KEPT_QUERY ? '' : `?${kept}`;
}

/** The query part of a request URL (after the first `?`), raw. */
export const searchOf = (rawUrl: string): string => {
  const at = rawUrl.indexOf('?');
  return at === -1 ? '' : rawUrl.slice(at + 1);
};

/** The path part of a request URL, decoded; undefined when it does not decode (404). */
export function pathOf(rawUrl: string): string | undefined {
  const raw = rawUrl.split('?', 1)[0] ?? '/';
  try {
    const path = decodeURIComponent(raw);
    // No link's path holds a NUL (the API refuses one), and PostgreSQL cannot even compare it.
    return path.includes('\u0000') ? undefined : path;
  } catch {
    return undefined;
  }
}

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
  options: {
    submitted: boolean;
    /** The domain's public origin for this request (http/public-origin.ts): crawlers need absolute image URLs. */
    origin: string;
    form?: ViewOptions['form'];
    visitorKey?: () => Promise<string>;
    /** What the request says of its visit: without it, no segment is matched and visit tokens take their fallbacks. */
    facts?: VisitFacts;
    /** The segment a shown-again form was served in (segments.ts, matchSegment). */
    preferredSegment?: string;
  },
): Promise<Outcome> {
  // Read before anything else: an outcome is remembered under the version its reads saw, or an older one.
  // On SQLite that is `data_version`; elsewhere the tenant's change sequence, read with the link
  // in one statement (resolve.ts), so an unchanged path costs that statement only.
  const dataVersion = context.dataVersion?.();
  const first = dataVersion === undefined ? await readSequenceAndLink(context.db, host, path) : undefined;
  if (first && !first.domainLive) return undefined;
  // By origin, not hostname: the same domain reached over https and over http has other image URLs.
  const memoKey = `${options.origin}|${path}|${options.submitted ? 1 : 0}`;
  const version = options.form ? undefined : (dataVersion ?? 0);
  const key0 = first ? `${host.tenantId}:${first.sequence}|${memoKey}` : memoKey;
  const { facts } = options;
  const remember = (at: string, value: Remembered) => version !== undefined && memo.set(version, at, value);
  /** A remembered document, when its rendering for this visit's token values is still cached. */
  const fromCache = async (known: Remembered | undefined): Promise<Outcome | undefined> => {
    if (known?.kind !== 'document') return undefined;
    const rendered = cache.get(known.key + (await fillKey(known.tokens, facts, known.company)));
    return rendered && { kind: 'document', rendered, stamp: known.stamp, visit: known.visit, varies: known.varies };
  };

  const known = version === undefined ? undefined : memo.get(version, key0);
  if (known?.kind === 'none') return undefined;
  if (known?.kind === 'redirect' || known?.kind === 'gone') return known;
  const hit = await fromCache(known);
  if (hit) return hit;

  let resolution: PageResolution;
  let segments: PageSegments | undefined;
  // Whether the tenant's segments read a company: only then may `{{company.*}}` ask the provider.
  let company = false;
  if (known?.kind === 'segmented') {
    resolution = known.resolution;
    segments = known.segments;
    company = segments.tenantReadsCompany;
  } else {
    const resolved = await resolvePath(context.db, host, path, first ? (first.link ?? null) : undefined);
    if (!resolved) return void remember(key0, { kind: 'none' });
    if (resolved.kind === 'redirect') {
      remember(key0, resolved);
      return resolved;
    }
    resolution = resolved;
    // Only a path that shows the page to everyone (no person's or audience's link) matches segments.
    if (resolution.audience.by === 'home' && facts) {
      const read = await readPageSegments(context.db, host.tenantId, resolution.pageId);
      company = read.tenantReadsCompany;
      if (read.segments.length > 0) {
        segments = read;
        remember(key0, { kind: 'segmented', resolution, segments });
      }
    }
  }
  let choice = resolution.audience;
  let memoAt = key0;
  let prior: Remembered | undefined = known;
  if (segments && facts) {
    const matched = await matchSegment(segments, facts, options.preferredSegment);
    if (matched !== undefined) choice = { by: 'id', audienceId: matched };
    memoAt = `${key0}|s:${matched ?? ''}`;
    prior = version === undefined ? undefined : memo.get(version, memoAt);
    const found = await fromCache(prior);
    if (found) return found;
  }

  const stamp = await readStamp(context.db, host.tenantId, resolution.pageId, choice);
  if (!stamp) return void remember(memoAt, { kind: 'none' });
  if (stamp.gone) {
    remember(memoAt, { kind: 'gone' });
    return { kind: 'gone' };
  }
  const assigned = await assignment(stamp, options.visitorKey, (experimentId, unit, candidate) =>
    stickyArm(context.db, experimentId, unit, candidate),
  );
  const inExperiment = typeof assigned === 'object' ? assigned : undefined;
  const visit: TokenFields = {
    tenantId: host.tenantId,
    pageId: stamp.pageId,
    // The page itself (no home audience) is measured and takes leads under its own id (docs/decisions.md).
    audienceId: stamp.audienceId ?? stamp.pageId,
    linkId: resolution.link?.id ?? '',
    path,
    ...(inExperiment ? { experimentId: inExperiment.experimentId, arm: inExperiment.arm, unit: inExperiment.unit } : {}),
  };
  const arm = inExperiment ? `${inExperiment.experimentId}:${inExperiment.arm}` : assigned === 'control' ? 'control' : '';
  const key = `${options.origin}|${path}|${resolution.link?.updated_at ?? ''}|${options.submitted ? 1 : 0}|${stampKey(stamp)}|${arm}`;
  // A visitor's daily key varies by visitor: its arm is chosen per request, never remembered per path.
  const rememberable = !inExperiment || inExperiment.unit.startsWith('person:');
  const segmented = segments !== undefined;
  // The tokens a rendering uses are known once it is rendered, and a remembered document names them;
  // without one, a rendering that used none is still found under the bare key (token ones never are).
  const tokens = prior?.kind === 'document' && prior.key === key ? prior.tokens : [];
  const cached = options.form ? undefined : cache.get(key + (await fillKey(tokens, facts, company)));
  if (cached) {
    const varies = segmented || tokens.length > 0;
    if (rememberable) remember(memoAt, { kind: 'document', key, stamp, visit, tokens, varies, company });
    return { kind: 'document', rendered: cached, stamp, visit, varies };
  }
  const { page, audience } = await rowsOf(context.db, host.tenantId, stamp.pageId, stamp.audienceId);
  if (!page) return undefined;
  const control = assigned === 'control' || inExperiment?.asControl === true;
  // A segment's control is the page as everyone sees it: the home audience's version, else the page.
  const home =
    control && stamp.personId === null && stamp.homeAudienceId !== null
      ? await findAudience(context.db, host.tenantId, stamp.pageId, stamp.homeAudienceId)
      : undefined;
  // The costly facts a visit token may read, before the (synchronous) rendering.
  if (facts) await facts.prepare(['visitor.country', 'company.name', 'company.industry'], company);
  const used = new Set<string>();
  const view = await loadView(context.db, page, audience, {
    path,
    // The thank-you page after a lead form is the same visit, already recorded by the form: it starts no new one.
    measured: !options.submitted,
    fileSrc,
    fileUrl: (fileId) => `${options.origin}${fileSrc(fileId)}`,
    form: options.form ?? (options.submitted ? { submitted: true } : undefined),
    asControl: control,
    ...(home ? { controlShows: home } : {}),
    ...(inExperiment?.versionId ? { versionId: inExperiment.versionId } : {}),
    visitTokens: { ...(facts ? { visit: (name: string) => facts.token(name) } : {}), used },
  });
  const rendered = render(view);
  const usedTokens = [...used].sort();
  const varies = segmented || usedTokens.length > 0;
  // Rows newer than the stamp would be cached under a key no request asks for again: harmless, but useless.
  const fresh =
    page.updated_at === stamp.pageUpdatedAt &&
    (audience?.updated_at ?? null) === stamp.audienceUpdatedAt &&
    (home === undefined || home.updated_at === stamp.homeUpdatedAt);
  if (!options.form && fresh) {
    cache.set(key + (await fillKey(usedTokens, facts, company)), rendered);
    if (rememberable) remember(memoAt, { kind: 'document', key, stamp, visit, tokens: usedTokens, varies, company });
  }
  return { kind: 'document', rendered, stamp, visit, varies };
}

/** The end of a document's cache key: the values this visit gives the tokens its rendering used. */
async function fillKey(tokens: readonly string[], facts: VisitFacts | undefined, company: boolean): Promise<string> {
  if (tokens.length === 0) return '';
  if (!facts) return '|t:';
  await facts.prepare(tokens, company);
  return `|t:${JSON.stringify(tokens.map((t) => facts.token(t)))}`;
}

export { DOCUMENT_CSP } from '../../render/rendered.js';

/**
 * Sends a document: 304 when the visitor has it, else its bytes with a fresh view token in its
 * slots, and `query` (`?a=b`, or '') where the URL's query goes (the lead form's path).
 */
export function sendDocument(
  request: FastifyRequest,
  reply: FastifyReply,
  context: SiteContext,
  served: Servable,
  query: string,
  status = 200,
  token?: string,
) {
  const { rendered } = served;
  // A URL whose document depends on the visitor (a segment, a visit token) is never kept by a shared
  // cache; a browser still revalidates it by its ETag, which differs per variant.
  reply
    .header('cache-control', served.varies ? 'private, no-cache' : 'no-cache')
    .header('etag', rendered.etag)
    .header('content-security-policy', rendered.policy);
  if (rendered.robots) reply.header('x-robots-tag', rendered.robots);
  if (status === 200 && notModified(request, rendered.etag)) return reply.code(304).send();
  const { parts, slots } = rendered;
  let body = parts[0] ?? '';
  if (slots.length > 0) {
    const value = token ?? context.tokens.sign(served.visit).token;
    const kept = attr(query);
    for (let i = 0; i < slots.length; i++) body += (slots[i] === 'query' ? kept : value) + (parts[i + 1] ?? '');
  }
  return reply.code(status).type('text/html; charset=utf-8').send(body);
}
