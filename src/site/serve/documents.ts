import { fileSrc, render, type ViewOptions, viewOf } from '../../render/index.js';
import type { SiteContext } from '../context.js';
import type { SiteHost } from '../hosts.js';
import { documentCache } from './cache.js';
import { choose } from './choose.js';
import { load } from './load.js';
import { outcomeMemo } from './memo.js';
import { resolve } from './resolve.js';
import { type Documents, type Outcome, startRun } from './run.js';
import type { VisitFacts } from './visit.js';

export type { Documents, Outcome, Servable } from './run.js';

/** The plane's documents, shared by the pages it serves and the forms it shows again with their errors. */
export function servedDocuments(context: SiteContext): Documents {
  const documents: Documents = { cache: documentCache(), memo: outcomeMemo() };
  context.observe?.watchDocuments(() => ({ cache: documents.cache.stats(), memo: documents.memo.stats() }));
  return documents;
}

/** How the page is served: what the route knows of the request. */
export interface ServeOptions {
  submitted: boolean;
  /** The domain's public origin for this request (http/public-origin.ts): crawlers need absolute image URLs. */
  origin: string;
  /** A lead form shown again with its errors: such a rendering is never cached. */
  form?: ViewOptions['form'];
  visitorKey?: () => Promise<string>;
  /** What the request says of its visit: without it, no segment is matched and visit tokens take their fallbacks. */
  facts?: VisitFacts;
  /** The segment a shown-again form was served in (segments.ts, matchSegment). */
  preferredSegment?: string;
}

/** The costly facts a visit token may read, prepared before the (synchronous) rendering. */
const PREPARED_TOKENS = ['visitor.country', 'company.name', 'company.industry'];

/**
 * A visitor path's document, in four steps: `resolve` (host and path to a link target), `choose`
 * (the variant: audience, segment, experiment arm or control), `load` (the rows it shows), and
 * `render` (reads nothing). A path's last answer is remembered while the database is unchanged,
 * and a rendering is cached under its variant and the versions of its rows (run.ts).
 */
export async function documentAt(
  context: SiteContext,
  documents: Documents,
  host: SiteHost,
  path: string,
  options: ServeOptions,
): Promise<Outcome> {
  const run = await startRun(context, documents, host, path, options);
  // The path's remembered answer (the hot path), or nothing here.
  if (run?.kind !== 'run') return run;
  const known = run.known?.kind === 'segmented' ? run.known : undefined;
  const target = known ?? (await resolve(context.db, host, path, run.link));
  if (target?.kind === 'redirect' || target === undefined) return run.settle(target ?? { kind: 'none' });
  const choice = await choose(context, host, target, run, { ...options, path, sequence: run.sequence });
  if (choice.kind === 'found') return choice.found;
  if (choice.kind !== 'chosen') return run.settle(choice);
  const { chosen } = choice;
  const cached = await run.cached(chosen);
  if (cached) return cached;
  const rows = await load(context.db, chosen.variant);
  if (!rows) return undefined;
  const { facts } = options;
  if (facts) await facts.prepare(PREPARED_TOKENS, chosen.company);
  const used = new Set<string>();
  const view = viewOf(rows, {
    path,
    // The thank-you page after a lead form is the same visit, already recorded by the form: it starts no new one.
    measured: !options.submitted,
    fileSrc,
    fileUrl: (fileId) => `${options.origin}${fileSrc(fileId)}`,
    form: options.form ?? (options.submitted ? { submitted: true } : undefined),
    visitTokens: { ...(facts ? { visit: (name: string) => facts.token(name) } : {}), used },
  });
  return run.keep(chosen, rows, render(view), used);
}
