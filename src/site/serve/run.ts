import { sql, type Kysely } from 'kysely';
import { batchedReads } from '../../db/batch.js';
import { counterRows, siteSequenceAt } from '../../db/changes.js';
import { prepared } from '../../db/prepared.js';
import type { Database } from '../../db/types.js';
import type { Rendered, ShownRows } from '../../render/index.js';
import type { SiteContext } from '../context.js';
import type { SiteHost } from '../hosts.js';
import type { TokenFields } from '../token.js';
import type { DocumentCache } from './cache.js';
import { armLabel, type Chosen } from './variant.js';
import type { OutcomeMemo } from './memo.js';
import type { Link } from './resolve.js';
import { assignArm, matchSegment, segmentOf, type PageResolution, type PageSegments } from './choose.js';
import type { Stamp } from './stamp.js';
import type { VisitFacts } from './visit.js';

/** A document ready to send: its rendering, and what its view token names when it has one. */
export interface Servable {
  rendered: Rendered;
  /**
   * What its view tokens name: tenant, page, audience, the link, and the path it was served at
   * (`P/<key>` of a `page_routing` link, or `/` for the home page: the session's pageUrl). One
   * object per remembered outcome, so that its part of each token is encoded once (site/token.ts).
   */
  visit: TokenFields;
  /**
   * The visitor's unit, when `visit` is an experiment arm's fields shared by its visitors (a daily
   * visitor key's arm): signed into the token beside them, so that `visit` stays one object.
   */
  unit?: string;
  /** Another visitor of the same URL may get another document (segments, visit tokens): never for a shared cache. */
  varies?: boolean;
}

/** `gone`: the path named an audience erased with its person (410, a page that names no one). */
export type Outcome = { kind: 'redirect'; location: string } | { kind: 'gone' } | ({ kind: 'document' } & Servable) | undefined;

/** A remembered outcome (serve/memo.ts): a document by its key in the document cache, not its bytes. */
export type Remembered =
  | { kind: 'none' }
  | { kind: 'redirect'; location: string }
  | { kind: 'gone' }
  /** A path to a page that has segments: each visit is matched, then its variant is remembered on its own. */
  | { kind: 'segmented'; resolution: PageResolution; segments: PageSegments }
  /**
   * A path (or a segment of one) whose experiment assigns each visitor an arm: each visit is
   * assigned from the stamp, then its arm's answer is remembered on its own (`armKey`), its
   * token's fields without the visitor's unit.
   */
  | { kind: 'assigned'; stamp: Stamp }
  | {
      kind: 'document';
      /** The document cache key, before the values of `tokens`. */
      key: string;
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

/** One request's way through the memo and the cache, around the steps of documents.ts. */
export interface Run {
  kind: 'run';
  /** What the path was remembered as, when that is no answer by itself (a segmented page). */
  known: Remembered | undefined;
  /** The link at exactly the path, when the first statement read it (null: read, and there is none). */
  link: Link | null | undefined;
  /** The tenant's change sequence the request's memo keys were read at. */
  sequence: number;
  /** Remembers an answer with no document where the request stands now, and gives it. */
  settle(value: { kind: 'none' } | { kind: 'redirect'; location: string } | { kind: 'gone' }): Outcome;
  remember(value: Remembered): void;
  atSegment(segment: string | undefined): Promise<Outcome | undefined>;
  /** The chosen variant's rendering, when cached for this visit's token values. */
  cached(chosen: Chosen): Promise<Outcome | undefined>;
  /** A fresh rendering: cached and remembered when its rows are the stamp's, and given. */
  keep(chosen: Chosen, rows: ShownRows, rendered: Rendered, used: ReadonlySet<string>): Promise<Outcome>;
}

interface RunOptions {
  origin: string;
  submitted: boolean;
  form?: unknown;
  facts?: VisitFacts;
  visitorKey?: () => Promise<string>;
}

/**
 * Starts a request's run: the path's answer when it is remembered and still holds (the hot path:
 * nothing is built for it but the answer), else the run of the steps. Read before anything else:
 * an outcome is remembered under the tenant's change sequence its reads saw, or an older one. On
 * SQLite the sequence is read once per committed state (`siteSequenceAt`), so a commit that moves
 * no tenant's sequence (a visit recorded, an experiment unit's first exposure) costs the next
 * request one read, not the whole run; elsewhere it is read with the link in one statement
 * (sequenceAndLink, below), so an unchanged path costs that statement only. `form` shows a lead
 * form's errors: such a rendering is never remembered. Undefined: the domain is no longer served,
 * or nothing is here.
 */
export async function startRun(
  context: SiteContext,
  documents: Documents,
  host: SiteHost,
  path: string,
  options: RunOptions,
): Promise<Outcome | Run> {
  const dataVersion = context.dataVersion?.();
  let first: SequenceAndLink | undefined;
  let sequence: number;
  if (dataVersion === undefined) {
    first = await readSequenceAndLink(context.db, host, path);
    if (!first.domainLive) return undefined;
    sequence = first.sequence;
  } else sequence = await siteSequenceAt(context.db, host.tenantId, dataVersion);
  // By origin, not hostname: the same domain reached over https and over http has other image URLs.
  const memoKey = `${options.origin}|${path}|${options.submitted ? 1 : 0}`;
  const remembers = !options.form;
  const key0 = `${host.tenantId}:${sequence}|${memoKey}`;
  const prior = remembers ? documents.memo.get(key0) : undefined;
  if (prior?.kind === 'none') return undefined;
  if (prior?.kind === 'redirect' || prior?.kind === 'gone') return prior;
  if (prior?.kind === 'segmented' && remembers && options.facts) {
    // A segmented path's hot case: the visit matched, then its segment's remembered answer.
    const segment = prior.segments.looksUp ? await matchSegment(prior.segments, options.facts) : segmentOf(prior.segments, options.facts);
    const at = segmentKey(key0, segment);
    const there = documents.memo.get(at);
    return (
      (await hot(context, documents, remembers, at, there, options)) ??
      runOf(documents, options, remembers, key0, prior, sequence, first, { segment, there })
    );
  }
  return (
    (await hot(context, documents, remembers, key0, prior, options)) ?? runOf(documents, options, remembers, key0, prior, sequence, first)
  );
}

/** Where a segmented path's answer for one of its segments (or none) is remembered. */
const segmentKey = (key0: string, segment: string | undefined) => `${key0}|s:${segment ?? ''}`;

/** Where an experiment path's answer for one arm is remembered: `at` is the path's key, or its segment's. */
const armKey = (at: string, arm: string) => `${at}|a:${arm}`;

/**
 * A remembered answer still cached, for this visit: an experiment's is its arm's, assigned as
 * choose.ts would from the remembered stamp, with the visitor's unit in its token.
 */
async function hot(
  context: SiteContext,
  documents: Documents,
  remembers: boolean,
  at: string,
  known: Remembered | undefined,
  options: RunOptions,
): Promise<Outcome | undefined> {
  if (known?.kind !== 'assigned') return fromCache(documents.cache, known, options.facts);
  if (!remembers) return undefined;
  const assigned = await assignArm(context, known.stamp, options.visitorKey);
  if (typeof assigned !== 'object') return undefined;
  const found = await fromCache(documents.cache, documents.memo.get(armKey(at, armLabel(assigned))), options.facts);
  return found?.kind === 'document' ? { ...found, unit: assigned.unit } : undefined;
}

/** The end of a document's cache key: the values this visit gives the tokens its rendering used. */
async function fillKey(tokens: readonly string[], facts: VisitFacts | undefined, company: boolean): Promise<string> {
  if (tokens.length === 0) return '';
  if (!facts) return '|t:';
  await facts.prepare(tokens, company);
  return `|t:${JSON.stringify(tokens.map((t) => facts.token(t)))}`;
}

/** A remembered document, when its rendering for this visit's token values is still cached. */
async function fromCache(cache: DocumentCache, known: Remembered | undefined, facts: VisitFacts | undefined): Promise<Outcome | undefined> {
  if (known?.kind !== 'document') return undefined;
  // Most documents use no visit token: their key is known without waiting for a fact.
  const rendered = cache.get(known.tokens.length === 0 ? known.key : known.key + (await fillKey(known.tokens, facts, known.company)));
  return rendered && { kind: 'document', rendered, visit: known.visit, varies: known.varies };
}

/** The run of the steps, for a path whose answer is not remembered (or is a segmented page). */
function runOf(
  { cache, memo }: Documents,
  options: RunOptions,
  remembers: boolean,
  key0: string,
  known: Remembered | undefined,
  sequence: number,
  first: SequenceAndLink | undefined,
  /** The segment startRun matched, and what the memo held there: not asked again. */
  looked?: { segment: string | undefined; there: Remembered | undefined },
): Run {
  const { facts } = options;
  let memoAt = key0;
  let prior = known;
  const remember = (at: string, value: Remembered) => remembers && memo.set(at, value);
  const document = (chosen: Chosen, rendered: Rendered, tokens: readonly string[]): Outcome => {
    const { key, visit, company } = chosen;
    const varies = variesOf(chosen, tokens);
    if (chosen.rememberable) remember(memoAt, { kind: 'document', key, visit, tokens, varies, company });
    else {
      // Every visitor of the arm gets this document; the unit in its token is each visitor's own.
      const { unit: _unit, ...shared } = visit;
      remember(memoAt, { kind: 'assigned', stamp: chosen.stamp });
      remember(armKey(memoAt, chosen.variant.arm), { kind: 'document', key, visit: shared, tokens, varies, company });
    }
    return { kind: 'document', rendered, visit, varies };
  };
  /** What the memo holds for the chosen variant: an experiment's arm's answer, else the path's (or segment's). */
  const priorOf = (chosen: Chosen) => (chosen.rememberable || !remembers ? prior : memo.get(armKey(memoAt, chosen.variant.arm)));
  return {
    kind: 'run',
    known,
    link: first ? (first.link ?? null) : undefined,
    sequence,
    settle: (value) => {
      remember(memoAt, value);
      return value.kind === 'none' ? undefined : value;
    },
    remember: (value) => void remember(key0, value),
    atSegment: async (segment) => {
      memoAt = segmentKey(key0, segment);
      // Already looked up and not cached by startRun: asked again, it would only count a second miss.
      if (looked && looked.segment === segment) {
        prior = looked.there;
        return undefined;
      }
      prior = remembers ? memo.get(memoAt) : undefined;
      return fromCache(cache, prior, facts);
    },
    cached: async (chosen) => {
      // The tokens a rendering uses are known once it is rendered, and a remembered document names them;
      // without one, a rendering that used none is still found under the bare key (token ones never are).
      const known = priorOf(chosen);
      const tokens = known?.kind === 'document' && known.key === chosen.key ? known.tokens : [];
      const found = options.form ? undefined : cache.get(chosen.key + (await fillKey(tokens, facts, chosen.company)));
      return found && document(chosen, found, tokens);
    },
    keep: async (chosen, rows, rendered, used) => {
      const tokens = [...used].sort();
      if (options.form || !fresh(rows, chosen.stamp)) {
        return { kind: 'document', rendered, visit: chosen.visit, varies: variesOf(chosen, tokens) };
      }
      cache.set(chosen.key + (await fillKey(tokens, facts, chosen.company)), rendered);
      return document(chosen, rendered, tokens);
    },
  };
}

/**
 * Whether another visitor of the same URL may get another document: a segment, a visit token, or
 * an experiment arm assigned per visitor (rememberable: no arm, or a person's link).
 */
const variesOf = (chosen: Chosen, tokens: readonly string[]) => chosen.segmented || tokens.length > 0 || !chosen.rememberable;

/** Rows newer than the stamp would be cached under a key no request asks for again: harmless, but useless. */
const fresh = (rows: ShownRows, stamp: Stamp) =>
  rows.row.updated_at === stamp.pageUpdatedAt &&
  (rows.audience?.updated_at ?? null) === stamp.audienceUpdatedAt &&
  (rows.shown === undefined || rows.shown === rows.audience || rows.shown.updated_at === stamp.homeUpdatedAt);

/** What the first statement of a served path reads (readSequenceAndLink). */
interface SequenceAndLink {
  /** The tenant's change sequence (db/changes.ts, `site:<tenantId>`) when the link was read: 0 before any change. */
  sequence: number;
  /** Whether the domain is still a verified domain of the tenant (the door's answer may be up to 5 s old). */
  domainLive: boolean;
  /** The live link at exactly this path, if any. */
  link: Link | undefined;
}

interface SequenceRow {
  sequence: number | string | null;
  domain_live: number | boolean | null;
  id: string | null;
  path: string | null;
  target_type: Link['target_type'] | null;
  target_audience_id: string | null;
  page_id: string | null;
  updated_at: string | null;
}

/**
 * The tenant's change sequence, whether the domain is still served, and the link at the path, in
 * one statement: without SQLite's `data_version` (PostgreSQL), the sequence that keys the memo is
 * read with the link, so a path whose tenant changed nothing costs this one statement. The sequence is
 * read in the same snapshot as the link, and every later read sees that state or a newer one: an
 * answer remembered under it is never older than it.
 */
const sequenceAndLink = prepared((db, p: { tenantId: string; domainId: string; path: string }) => ({
  compile: () =>
    sql<SequenceRow>`
      select
        (select sum(c.value) from change_counters c where c.scope in (${counterRows(sql<string>`'site:' || cast(${p.tenantId} as text)`)})) as sequence,
        (select 1 from tenant_domains d where d.id = ${p.domainId} and d.tenant_id = ${p.tenantId} and d.status = 'verified') as domain_live,
        l.id, l.path, l.target_type, l.target_audience_id, l.page_id, l.updated_at
      from (select 1 as one) as here
      left join page_links l on l.tenant_domain_id = ${p.domainId} and l.path = ${p.path} and l.deleted_at is null`.compile(db),
}));

/** The same read for the paths of many requests at once (db/batch.ts), each row naming its key. */
const sequencesAndLinks = prepared((db, p: { tenantIds: string[]; domainIds: string[]; paths: string[] }) => ({
  compile: () =>
    sql<SequenceRow & ServedKey>`
      select
        k.tenant_id as key_tenant_id, k.domain_id as key_domain_id, k.path as key_path,
        (select sum(c.value) from change_counters c where c.scope in (${counterRows(sql<string>`'site:' || k.tenant_id`)})) as sequence,
        (select 1 from tenant_domains d where d.id = k.domain_id and d.tenant_id = k.tenant_id and d.status = 'verified') as domain_live,
        l.id, l.path, l.target_type, l.target_audience_id, l.page_id, l.updated_at
      from unnest(cast(${p.tenantIds} as text[]), cast(${p.domainIds} as text[]), cast(${p.paths} as text[])) as k(tenant_id, domain_id, path)
      left join page_links l on l.tenant_domain_id = k.domain_id and l.path = k.path and l.deleted_at is null`.compile(db),
}));

interface ServedKey {
  key_tenant_id: string;
  key_domain_id: string;
  key_path: string;
}

const servedKey = (tenantId: string, domainId: string, path: string) => JSON.stringify([tenantId, domainId, path]);

const readServed = batchedReads({
  id: (key: { tenantId: string; domainId: string; path: string }) => servedKey(key.tenantId, key.domainId, key.path),
  rowId: (row: SequenceRow & Partial<ServedKey>) => servedKey(row.key_tenant_id ?? '', row.key_domain_id ?? '', row.key_path ?? ''),
  one: async (db, key): Promise<SequenceRow | undefined> => (await sequenceAndLink(db, key))[0],
  many: (db, keys) =>
    sequencesAndLinks(db, {
      tenantIds: keys.map((k) => k.tenantId),
      domainIds: keys.map((k) => k.domainId),
      paths: keys.map((k) => k.path),
    }),
});

async function readSequenceAndLink(db: Kysely<Database>, host: SiteHost, path: string): Promise<SequenceAndLink> {
  const row = await readServed(db, { tenantId: host.tenantId, domainId: host.domainId, path });
  const link: Link | undefined =
    row?.id && row.path !== null && row.target_type !== null && row.page_id !== null && row.updated_at !== null
      ? {
          id: row.id,
          path: row.path,
          target_type: row.target_type,
          target_audience_id: row.target_audience_id,
          page_id: row.page_id,
          updated_at: row.updated_at,
        }
      : undefined;
  return { sequence: Number(row?.sequence ?? 0), domainLive: row?.domain_live != null, link };
}
