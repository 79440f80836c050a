import { sql, type Kysely } from 'kysely';
import {
  audienceRulesOf,
  type CompiledRules,
  compileRules,
  firstMatch,
  indexRules,
  liveAudienceRules,
  type Rules,
  type RulesIndex,
} from '../../audiences/index.js';
import { CACHES, databaseCache } from '../../db/caches.js';
import { siteSequenceAt } from '../../db/changes.js';
import { prepared } from '../../db/prepared.js';
import type { Database } from '../../db/types.js';
import { assignment, stickyArm } from '../../experiments/index.js';
import type { SiteContext } from '../context.js';
import type { SiteHost } from '../hosts.js';
import type { Resolution } from './resolve.js';
import { readStamp, type Stamp } from './stamp.js';
import { type Chosen, variantOf } from './variant.js';
import { looksUp, type VisitFacts } from './visit.js';

/** A path that resolved to a page for everyone (link to the page, or the home page). */
export type PageResolution = Extract<Resolution, { kind: 'page' }>;

/** How choose asks the served-path memo (documents.ts): `T` is a remembered answer still good. */
export interface ChooseMemo<T> {
  remember(value: { kind: 'segmented'; resolution: PageResolution; segments: PageSegments }): void;
  /** The visit matched this segment (or none): its own remembered answer, when still cached. */
  atSegment(segment: string | undefined): Promise<T | undefined>;
}

export interface ChooseOptions {
  origin: string;
  path: string;
  submitted: boolean;
  visitorKey?: () => Promise<string>;
  facts?: VisitFacts;
  preferredSegment?: string;
  /** The tenant's change sequence, when the path's first statement read it (PostgreSQL). */
  sequence?: number;
}

/**
 * The choose step: the audience (the path's, else the segment the visit matches), then the
 * experiment arm or control, and what each shows, from the stamp of the page and audience (one
 * read). `none`: the page is not served; `gone`: the path named an audience erased with its person.
 */
export async function choose<T>(
  context: SiteContext,
  host: SiteHost,
  target: PageResolution | { kind: 'segmented'; resolution: PageResolution; segments: PageSegments },
  memo: ChooseMemo<T>,
  options: ChooseOptions,
): Promise<{ kind: 'chosen'; chosen: Chosen } | { kind: 'found'; found: T } | { kind: 'none' } | { kind: 'gone' }> {
  const { facts } = options;
  const resolution = target.kind === 'segmented' ? target.resolution : target;
  let segments = target.kind === 'segmented' ? target.segments : undefined;
  let company = segments?.tenantReadsCompany ?? false;
  // Only a path that shows the page to everyone (no person's or audience's link) matches segments.
  if (!segments && resolution.audience.by === 'home' && facts) {
    const dataVersion = options.sequence === undefined ? context.dataVersion?.() : undefined;
    const sequence =
      options.sequence ?? (dataVersion !== undefined ? await siteSequenceAt(context.db, host.tenantId, dataVersion) : undefined);
    const read =
      sequence !== undefined
        ? await pageSegments(context.db, host.tenantId, resolution.pageId, sequence)
        : await readPageSegments(context.db, host.tenantId, resolution.pageId);
    company = read.tenantReadsCompany;
    if (read.segments.length > 0) {
      segments = read;
      memo.remember({ kind: 'segmented', resolution, segments });
    }
  }
  let audience = resolution.audience;
  if (segments && facts) {
    const matched = await matchSegment(segments, facts, options.preferredSegment);
    if (matched !== undefined) audience = { by: 'id', audienceId: matched };
    const found = await memo.atSegment(matched);
    if (found) return { kind: 'found', found };
  }
  const stamp = await readStamp(context.db, host.tenantId, resolution.pageId, audience);
  if (!stamp) return { kind: 'none' };
  if (stamp.gone) return { kind: 'gone' };
  const assigned = await assignArm(context, stamp, options.visitorKey);
  const chosen = variantOf(host, resolution, stamp, assigned, options);
  return { kind: 'chosen', chosen: { ...chosen, segmented: segments !== undefined, company } };
}

/** The visitor's arm in the experiment the stamp names, kept once assigned (experiments/units.ts); run.ts's hot path too. */
export const assignArm = (context: SiteContext, stamp: Stamp, visitorKey: (() => Promise<string>) | undefined) =>
  assignment(stamp, visitorKey, (experimentId, unit, candidate) => stickyArm(context.db, experimentId, unit, candidate));

// The page's segments: read once per change of the tenant, their rules compiled once per change of
// each, and the first the visit matches.

/** One live segment audience of a page, its rules compiled. */
export interface PageSegment {
  audienceId: string;
  rules: CompiledRules;
}

/**
 * A page's live segments in the order a visitor is matched (priority, highest first; ties, the
 * oldest), the fields they read, and whether any live segment of a published page of the tenant
 * reads a company (only then is the enrichment provider asked, for the rules and for
 * `{{company.*}}` tokens alike).
 */
export interface PageSegments {
  segments: PageSegment[];
  /** The segments indexed by a value they require (audiences/rules.ts): matching does not grow with their number. */
  index: RulesIndex;
  fields: ReadonlySet<string>;
  tenantReadsCompany: boolean;
  /** Whether a field of theirs costs a look-up (visit.ts `looksUp`): else a visit is matched without waiting. */
  looksUp: boolean;
}

interface SegmentRow {
  tenant_company: number | boolean | null;
  id: string | null;
  updated_at: string | null;
}

/** A segment's rules compiled, and what they weigh as kept (db/cache-catalogue.ts, `segmentRules`). */
interface Compiled {
  rules: CompiledRules;
  bytes: number;
}
const compiledRules = databaseCache<Compiled>(CACHES.segmentRules);
const compiledKey = (id: string, updatedAt: string) => `${id} ${updatedAt}`;

/**
 * Whether a live segment (not archived) of a published, undeleted page of the tenant reads
 * `company.*`: only then is a visitor's address a reason to ask the enrichment provider (issue 45).
 * A segment on a draft, archived or deleted page is no reason: no visitor can be matched by it.
 */
const liveSegmentReadsCompany = (tenantId: string) => sql<number>`(
  select 1 from audiences c
  join pages cp on cp.id = c.page_id and cp.tenant_id = c.tenant_id
  where c.tenant_id = ${tenantId} and c.archived_at is null and c.rules is not null and c.rules like '%"company.%'
    and cp.status = 'published' and cp.deleted_at is null
  limit 1)`;

/**
 * One statement, read when a path to the page is resolved (kept in the outcome memo with the path's
 * resolution, so under the same change sequence it is not read again). The row
 * of `here` answers the tenant's flag when the page has no segment. The rules themselves are not
 * read: each segment's `updated_at` names its compiled rules, kept until it changes.
 */
const segmentsOfPage = prepared((db, p: { tenantId: string; pageId: string }) => ({
  compile: () =>
    sql<SegmentRow>`
      select
        ${liveSegmentReadsCompany(p.tenantId)} as tenant_company,
        a.id, a.updated_at
      from (select 1 as one) as here
      left join audiences a on a.page_id = ${p.pageId} and a.tenant_id = ${p.tenantId}
        and a.archived_at is null and a.rules is not null
      order by a.priority desc, a.created_at asc, a.id asc`.compile(db),
}));

const keptSegments = databaseCache<PageSegments>(CACHES.pageSegments);

/**
 * A page's segments, kept under the tenant's change sequence (issue 50): every write that changes a
 * page's segments (an audience's rules, archive, the page's status) moves it, and a visit recorded
 * does not. So a commit of visits, which empties SQLite's outcome memo, costs a segmented path one
 * read of the sequence per tenant instead of its page's segments. `sequence`: as the caller read it
 * before this read (PostgreSQL, with the link; SQLite, db/changes.ts `siteSequenceAt`).
 */
export async function pageSegments(db: Kysely<Database>, tenantId: string, pageId: string, sequence: number): Promise<PageSegments> {
  const key = `${tenantId} ${sequence} ${pageId}`;
  const kept = keptSegments(db);
  const found = kept.get(key);
  if (found) return found;
  // Read after the sequence: never older than the state it is kept under.
  const read = await readPageSegments(db, tenantId, pageId);
  kept.set(key, read);
  return read;
}

export async function readPageSegments(db: Kysely<Database>, tenantId: string, pageId: string): Promise<PageSegments> {
  const rows = await segmentsOfPage(db, { tenantId, pageId });
  const kept = compiledRules(db);
  const live = rows.flatMap((row) =>
    row.id === null || row.updated_at === null ? [] : [{ id: row.id, key: compiledKey(row.id, row.updated_at) }],
  );
  const missing = live.filter((s) => !kept.has(s.key)).map((s) => s.id);
  if (missing.length > 0) await compileChanged(db, tenantId, missing);
  const segments: PageSegment[] = [];
  const fields = new Set<string>();
  for (const { id, key } of live) {
    // Changed between the two reads, or too large to keep: compiled now, as read now.
    const compiled = kept.get(key) ?? (await compileNow(db, tenantId, id));
    if (!compiled) continue;
    for (const f of compiled.rules.fields) fields.add(f);
    segments.push({ audienceId: id, rules: compiled.rules });
  }
  const flag = rows[0]?.tenant_company;
  return {
    segments,
    index: indexRules(segments),
    fields,
    tenantReadsCompany: flag === 1 || flag === true,
    looksUp: [...fields].some(looksUp),
  };
}

const compile = (text: string): Compiled => ({ rules: compileRules(JSON.parse(text) as Rules), bytes: 4 * text.length + 256 });

/** Reads and compiles the rules of the segments not kept (new, or changed since), each kept under its id and time as read. */
async function compileChanged(db: Kysely<Database>, tenantId: string, ids: string[]): Promise<void> {
  const kept = compiledRules(db);
  const rows = await audienceRulesOf(db, tenantId, ids);
  for (const row of rows) if (row.rules !== null) kept.set(compiledKey(row.id, row.updated_at), compile(row.rules));
}

async function compileNow(db: Kysely<Database>, tenantId: string, id: string): Promise<Compiled | undefined> {
  const rules = await liveAudienceRules(db, tenantId, id);
  return rules ? compile(rules) : undefined;
}

/**
 * The first segment the visit matches, or undefined (the home audience, else the page). A segment
 * `preferred` (a lead form shown again names the audience its visit was served) wins while it is
 * still one of the page's segments, so the form comes back in the version it was filled in.
 */
export async function matchSegment(page: PageSegments, facts: VisitFacts, preferred?: string): Promise<string | undefined> {
  if (preferred !== undefined && page.segments.some((s) => s.audienceId === preferred)) return preferred;
  if (page.looksUp) await facts.prepare(page.fields, page.tenantReadsCompany);
  return segmentOf(page, facts);
}

/**
 * The first segment the visit matches, once the facts its segments look up are gathered, or at
 * once when they look up none (`looksUp`): a served page's hot path then waits for nothing.
 */
export const segmentOf = (page: PageSegments, facts: VisitFacts): string | undefined =>
  page.segments[firstMatch(page.segments, page.index, facts.value, facts.withheld)]?.audienceId;
