import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Freshness } from '../../db/changes.js';
import { dailySecrets } from '../../db/daily-secrets.js';
import type { CompanyLookup } from '../../enrichment/index.js';
import { AppError, invalidField, notFound } from '../../http/errors.js';
import { clientAddress, trustedProxies } from '../../http/proxies.js';
import type { PublicOrigin } from '../../http/public-origin.js';
import { notModified, addressLimiter } from '../../site/index.js';
import { siteByKey, touchSiteSeen } from '../sites-repository.js';
import { decisionTokens } from '../decision-token.js';
import { urlMatchSource, conversionMatch } from '../url-match.js';
import { decideFor, type DecideContext, unitFor } from './decision.js';
import { liveSite } from './live-site.js';
import { redeemToolToken } from './tool-tokens.js';
import { siteScript } from './script.js';

export interface SnippetOptions {
  /** The service secret: the decision token's key is derived from it. */
  secret: string;
  companyLookup: CompanyLookup;
  /** The public origin of a tenant domain (app.ts): inserted sections' images are served there. */
  origin: PublicOrigin;
  /** How a kept live site is known to be current without a read of its tenant's counter (live-site.ts). */
  freshness: Freshness;
}

const SiteKey = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$', description: "The site's public key" });
const ScriptQuery = Type.Object({ site: SiteKey }, { additionalProperties: false });
const DecideQuery = Type.Object(
  {
    site: SiteKey,
    url: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: "The page's URL (absolute, http or https, on one of the site's origins)",
    }),
    ref: Type.Optional(Type.String({ maxLength: 2048, description: "The page's referrer, '' for none" })),
    preview: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'A preview token (`?pam_preview=`)' })),
  },
  { additionalProperties: false },
);
const PickQuery = Type.Object({ site: SiteKey, token: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

/** The browser may keep the script a minute, then asks again (304 while unchanged). */
const SCRIPT_CACHE = 'public, max-age=60, stale-while-revalidate=600';

/**
 * The site script and what it asks (issue 48 §3, §5), on the API host: `GET /_pam/site.js`,
 * `GET /_pam/decide` and `GET /_pam/pick`. No API key (a visitor's browser asks); decide and pick
 * answer only a request from one of the site's own origins (CORS with that origin), rate-limited
 * per address and per site. Not in the OpenAPI document: they are the script's, not the API's.
 */
export const snippetRoutes: FastifyPluginAsyncTypebox<SnippetOptions> = async (app, options) => {
  const { config } = app;
  const trusted = trustedProxies(config.trustProxy);
  const context: DecideContext = {
    db: app.db,
    tokens: decisionTokens(options.secret),
    secrets: dailySecrets(app.db),
    trusted,
    companyLookup: options.companyLookup,
    origin: options.origin,
  };
  const perAddress = addressLimiter(config.decideRatePerMinute);
  const perSite = addressLimiter(config.decideSiteRatePerMinute);
  const consoleOrigin = new URL(config.publicBaseUrl).origin;
  const addressOf = (request: FastifyRequest) =>
    clientAddress(trusted, request.raw.socket.remoteAddress, request.headers['x-forwarded-for']);

  // At most one write a minute a site (touchSiteSeen): awaited, so that what a request did is seen after it.
  const seen = (siteId: string) =>
    touchSiteSeen(app.db, siteId, Date.now()).catch((err: unknown) => app.log.warn({ err }, 'lastSeenAt not stamped'));

  app.get('/_pam/site.js', { schema: { hide: true, querystring: ScriptQuery } }, async (request, reply) => {
    const live = await liveSite(app.db, request.query.site, options.freshness);
    if (!live) throw notFound('Site');
    const { site, experiences } = live;
    // The script was fetched by one of the site's pages (its Origin, or failing that its Referer): installed.
    const from = originOf(request.headers.origin) ?? originOf(request.headers.referer);
    if (from !== undefined && site.origins.includes(from)) await seen(site.siteId);
    const script = siteScript({
      base: config.publicBaseUrl,
      consoleOrigin,
      siteKey: request.query.site,
      pages: experiences.map((e) => urlMatchSource(e.urlMatch)),
      conversions: experiences.flatMap((e) => (e.conversionUrl ? [urlMatchSource(conversionMatch(e.conversionUrl))] : [])),
    });
    // Public: a `crossorigin` script tag may read it from any origin.
    reply.header('etag', script.etag).header('cache-control', SCRIPT_CACHE).header('access-control-allow-origin', '*');
    if (notModified(request, script.etag)) return reply.code(304).send();
    return reply.type('text/javascript; charset=utf-8').send(script.body);
  });

  app.get('/_pam/decide', { schema: { hide: true, querystring: DecideQuery } }, async (request, reply) => {
    private_(reply);
    const { url, ref = '', preview } = request.query;
    const page = URL.parse(url);
    if (!page || (page.protocol !== 'https:' && page.protocol !== 'http:'))
      throw invalidField('/url', 'must be an absolute http or https URL');
    const address = addressOf(request);
    limit(perAddress.take(address));
    const live = await liveSite(app.db, request.query.site, options.freshness);
    if (!live) throw notFound('Site');
    const { site, experiences } = live;
    limit(perSite.take(site.siteId));
    const origin = ownOrigin(request, site.origins, page.origin);
    reply.header('access-control-allow-origin', origin);
    await seen(site.siteId);
    return decideFor(context, request, { site, address, experiences, page, ref, preview });
  });

  app.get('/_pam/pick', { schema: { hide: true, querystring: PickQuery } }, async (request, reply) => {
    private_(reply);
    const address = addressOf(request);
    limit(perAddress.take(address));
    const site = await siteByKey(app.db, request.query.site);
    if (!site) throw notFound('Site');
    const origin = ownOrigin(request, site.origins, originOf(request.headers.origin) ?? '');
    reply.header('access-control-allow-origin', origin);
    const unit = await unitFor(context, request, new URL(origin).hostname, address);
    const redeemed = await redeemToolToken(app.db, 'pick', site.siteId, request.query.token, unit);
    if (!redeemed) throw notFound('Pick token');
    return { consoleOrigin };
  });
};

/** Never kept by a cache; the answer differs by the Origin asked from. */
function private_(reply: FastifyReply): void {
  reply.header('vary', 'Origin').header('cache-control', 'private, no-store');
}

function limit(bucket: { allowed: boolean; retryAfterSeconds: number }): void {
  if (!bucket.allowed)
    throw new AppError('rate_limited', 'Too many decisions: try again later', undefined, {
      'retry-after': String(bucket.retryAfterSeconds),
    });
}

function originOf(value: string | string[] | undefined): string | undefined {
  if (typeof value !== 'string') return undefined;
  const parsed = URL.parse(value);
  return parsed && (parsed.protocol === 'https:' || parsed.protocol === 'http:') ? parsed.origin : undefined;
}

/**
 * The request's Origin when it is one of the site's and the page's own: anything else (another
 * origin, none, a page URL on another origin) is refused, without CORS, so no changes are read.
 */
function ownOrigin(request: FastifyRequest, origins: readonly string[], pageOrigin: string): string {
  const origin = originOf(request.headers.origin);
  if (origin === undefined || !origins.includes(origin) || origin !== pageOrigin)
    throw new AppError('forbidden', "Decisions are answered only to the site's own origins");
  return origin;
}
