import type { BlockList } from 'node:net';
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { type DailySecrets, dayOf } from '../../db/daily-secrets.js';
import type { Database } from '../../db/types.js';
import type { CompanyLookup } from '../../enrichment/index.js';
import type { PublicOrigin } from '../../http/public-origin.js';
import { visitorKey } from '../../experiments/index.js';
import { describedVisit, visitFacts, sourceOf } from '../../site/index.js';
import { type DecisionClaims, type DecisionTokens, type DecisionUtm, MAX_DECISION_TOKEN_LENGTH } from '../decision-token.js';
import {
  type CompiledExperience,
  compiled,
  type DecidedExperience,
  appliedChanges,
  armOf,
  chooseExperiences,
  experiencesAt,
  readsCompany,
} from './decide.js';
import { sectionImages, sectionStyle } from './section.js';
import { redeemToolToken } from './tool-tokens.js';
import { parseRules } from '../../audiences/index.js';
import type { Change } from '../changes.js';
import { findExperience } from '../experiences-repository.js';

export interface DecideContext {
  db: Kysely<Database>;
  tokens: DecisionTokens;
  secrets: DailySecrets;
  trusted: BlockList | undefined;
  companyLookup: CompanyLookup;
  /** The public origin of a tenant domain: where an inserted section's images are served. */
  origin: PublicOrigin;
}

export interface DecideInput {
  site: { siteId: string; tenantId: string };
  /** The visitor's address (http/proxies.ts `clientAddress`), used and dropped. */
  address: string;
  experiences: CompiledExperience[];
  page: URL;
  ref: string;
  preview: string | undefined;
}

/** decide's answer (issue 48 §3); `style` only when a section is inserted (the shadow roots' style). */
export interface Decision {
  experiences: DecidedExperience[];
  token: string;
  style?: string;
}

const CLICK_IDS = ['gclid', 'fbclid', 'msclkid'];
const UTM: [keyof DecisionUtm, string][] = [
  ['utmSource', 'utm_source'],
  ['utmMedium', 'utm_medium'],
  ['utmCampaign', 'utm_campaign'],
  ['utmTerm', 'utm_term'],
  ['utmContent', 'utm_content'],
];

/**
 * The unit a page's visitor is assigned by: the daily visitor key of served pages' experiments
 * (experiments/assign.ts), on the page's host. The address and user agent are used and dropped.
 */
export async function unitFor(context: DecideContext, request: FastifyRequest, hostname: string, address: string): Promise<string> {
  return visitorKey(await context.secrets.today(), hostname, address, request.headers['user-agent'] ?? '');
}

/**
 * The decision for one page view: its visit classed as a served page's is (UTM and query from the
 * page's URL, the referrer from `ref`, country and device from the request, the company only when
 * a matching experience reads one and the visitor did not send `Sec-GPC: 1`), the experiences it
 * gets, each one's arm, their changes filled, and the signed token the script reports with. A
 * valid preview token forces its experience, with its described visit, unmeasured.
 */
export async function decideFor(context: DecideContext, request: FastifyRequest, input: DecideInput): Promise<Decision> {
  const { site, page } = input;
  const now = Date.now();
  const unit = await unitFor(context, request, page.hostname, input.address);
  const { matching, converting } = experiencesAt(input.experiences, page.pathname);
  const forced = input.preview === undefined ? undefined : await previewOf(context, input, unit);
  const query = queryOf(page);
  const facts = forced
    ? describedVisit(forced.visit)
    : visitFacts(
        context,
        { query, headers: { ...request.headers, referer: input.ref }, raw: request.raw },
        { hostname: page.hostname, tenantId: site.tenantId },
      );
  const chosen = forced ? [forced.experience] : await chooseExperiences(matching, facts, readsCompany(matching));
  if (forced) await facts.prepare([], false);
  const arms = chosen.map((e) => ({ e, arm: forced ? ('personalised' as const) : armOf(e, unit) }));
  const inserted = arms.flatMap(({ e, arm }) =>
    arm === 'holdout' ? [] : e.changes.flatMap((c) => (c.action === 'section' ? [c.value] : [])),
  );
  const images = await sectionImages(context.db, site.tenantId, inserted, (hostname) => context.origin(hostname, request.raw));
  const experiences = arms.map(({ e, arm }): DecidedExperience => {
    return { experienceId: e.experienceId, arm, changes: arm === 'holdout' ? [] : appliedChanges(e.changes, facts, images) };
  });
  const source = sourceOf(input.ref, page.hostname, {
    adClick: CLICK_IDS.some((id) => query[id] !== undefined),
    utmMedium: query.utm_medium ?? '',
    utmSource: query.utm_source ?? '',
    utmCampaign: query.utm_campaign ?? '',
  });
  const utm: DecisionUtm = {};
  for (const [field, param] of UTM) {
    // Cut so that the token stays well inside the collector's 2 KB report.
    const value = query[param]?.slice(0, 100);
    if (value) utm[field] = value;
  }
  const claims: DecisionClaims = {
    tenantId: site.tenantId,
    siteId: site.siteId,
    unit,
    day: dayOf(now),
    path: page.pathname.slice(0, 512),
    experiences: experiences.map(({ experienceId, arm }) => ({ experienceId, arm })),
    converting: forced ? [] : converting,
    ...(source.referrerHost ? { referrerHost: source.referrerHost } : {}),
    channel: source.channel,
    ...(Object.keys(utm).length > 0 ? { utm } : {}),
    ...(forced ? { preview: true } : {}),
    issuedAt: now,
  };
  const sections = experiences.some((e) => e.changes.some((c) => c.action === 'section'));
  let token = context.tokens.sign(claims);
  if (token.length > MAX_DECISION_TOKEN_LENGTH) {
    const { utm: _cut, ...shorter } = claims;
    token = context.tokens.sign(shorter);
  }
  return {
    experiences,
    token,
    ...(sections ? { style: await sectionStyle(context.db, site.tenantId) } : {}),
  };
}

/** The page URL's query, each parameter given twice by its first value, as a served page reads it (site/serve/visit.ts). */
function queryOf(page: URL): Record<string, string | undefined> {
  const query: Record<string, string | undefined> = Object.create(null);
  for (const [name, value] of page.searchParams) query[name] ??= value;
  return query;
}

/**
 * The experience a preview token forces on this site (whatever its status: a draft is previewed
 * before it goes live), with its described visit; undefined when the token is not good here.
 */
async function previewOf(
  context: DecideContext,
  input: DecideInput,
  unit: string,
): Promise<{ experience: CompiledExperience; visit: Parameters<typeof describedVisit>[0] } | undefined> {
  const redeemed = await redeemToolToken(context.db, 'preview', input.site.siteId, input.preview ?? '', unit);
  if (!redeemed?.experienceId) return undefined;
  const row = await findExperience(context.db, input.site.tenantId, redeemed.experienceId);
  if (!row || row.site_id !== input.site.siteId) return undefined;
  const experience = compiled({
    experienceId: row.id,
    urlMatch: { type: row.url_match_type, value: row.url_match_value },
    rules: parseRules(row.rules),
    priority: Number(row.priority),
    holdoutPercent: Number(row.holdout_percent),
    conversionUrl: row.conversion_url,
    changes: JSON.parse(row.changes) as Change[],
  });
  return { experience, visit: redeemed.visit };
}
