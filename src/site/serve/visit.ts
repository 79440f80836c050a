import type { FastifyRequest } from 'fastify';
import type { FieldValue } from '../../audiences/index.js';
import type { PreviewVisit } from '../../pages/index.js';
import { dayOf } from '../../db/daily-secrets.js';
import { type Company, companyForVisit } from '../../enrichment/index.js';
import { mayLeave, sentGpc } from '../../events/index.js';
import { visitorKey } from '../../experiments/index.js';
import { sessionSeenSince } from '../../visits/index.js';
import type { SiteContext } from '../context.js';
import type { SiteHost } from '../hosts.js';
import { clientAddress } from '../../http/proxies.js';
import { visitorHash } from '../measure/classify.js';
import { countryOf } from '../measure/country.js';
import { deviceOf } from '../measure/device.js';
import { sourceOf } from '../measure/source.js';

/**
 * What a request says of its visit, for a page's segments (audiences/rules.ts) and the visit's
 * tokens (render/content.ts): read from the request as asked, in memory. The address and the user
 * agent are used here and dropped; nothing of them is stored or logged. The facts that cost a
 * look-up (the country, whether the visitor came back today, the company) are gathered first by
 * `prepare`, and only those some rule or token reads.
 */
export interface VisitFacts {
  /** Gathers the costly facts `fields` read; `company` only when the tenant's segments read one. */
  prepare(fields: Iterable<string>, company: boolean): Promise<void>;
  /** A field's value (rules): null when the visit does not say. */
  value(field: string): FieldValue;
  /**
   * Whether a field was withheld by the visitor (`Sec-GPC: 1` withholds `company.*`): a condition
   * on it never matches, whatever its operator.
   */
  withheld(field: string): boolean;
  /** A token's value, held to the value rule; null: its fallback. */
  token(name: string): string | null;
}

/** A request's facts, and its visitor's key for the day. */
export interface RequestFacts extends VisitFacts {
  /**
   * The experiment unit of a visitor without a person (experiments/assign.ts): asked only when an
   * experiment needs it. The address and user agent are used here, in memory, and never stored.
   */
  visitorKey(): Promise<string>;
}

/** At most 60 letters, digits, spaces and -.,&' (after the query's decoding); any other value takes the fallback. */
const FILLABLE = /^[\p{L}\p{N} \-.,&']{1,60}$/u;
/** The facts that cost a look-up; every other one is read from the request as asked. */
const COSTLY = new Set(['visitor.country', 'visitor.returning', 'company']);

/** Whether a field's value may cost a look-up (`prepare`): a visit reading none is matched without waiting. */
export const looksUp = (field: string): boolean => COSTLY.has(field) || field.startsWith('company.');
const CLICK_IDS = ['gclid', 'fbclid', 'msclkid'] as const;

const countryNames = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
/** A country's name in English ("Germany"), or null for a code Intl does not know. */
export function countryName(code: string): string | null {
  if (!/^[A-Z]{2}$/.test(code)) return null;
  try {
    return countryNames.of(code) ?? null;
  } catch {
    return null;
  }
}

/** Whether a visitor key had a session on the tenant's site today (UTC) before this visit. */
const seenToday = sessionSeenSince;

const first = (value: unknown): string => {
  const one = Array.isArray(value) ? value[0] : value;
  return typeof one === 'string' ? one : '';
};

/**
 * Narrowed to what it reads, so that the site script's decision (src/onsite/snippet/) classes its
 * visit by the same rules, from the page's URL and referrer as it reports them.
 */
export function visitFacts(
  context: Pick<SiteContext, 'trusted' | 'secrets' | 'db' | 'companyLookup'>,
  request: Pick<FastifyRequest, 'query' | 'headers' | 'raw'>,
  host: Pick<SiteHost, 'hostname' | 'tenantId'>,
): RequestFacts {
  const query = (request.query ?? {}) as Record<string, unknown>;
  const param = (name: string) => first(query[name]).trim();
  let address: string | undefined;
  const addressOf = () => {
    address ??= clientAddress(context.trusted, request.raw.socket.remoteAddress, request.headers['x-forwarded-for']);
    return address;
  };
  const userAgent = () => request.headers['user-agent'] ?? '';
  let source: ReturnType<typeof sourceOf> | undefined;
  const sourceNow = () => {
    source ??= sourceOf(first(request.headers.referer), host.hostname, {
      adClick: CLICK_IDS.some((id) => param(id) !== ''),
      utmMedium: param('utm_medium'),
      utmSource: param('utm_source'),
      utmCampaign: param('utm_campaign'),
    });
    return source;
  };
  let country = '';
  let returning: boolean | null = null;
  let company: Company | null = null;
  const gpc = sentGpc(request.headers);
  const started = new Map<string, Promise<void>>();
  const lookUp = async (job: string): Promise<void> => {
    if (job === 'visitor.country') {
      country = await countryOf(addressOf());
    } else if (job === 'visitor.returning') {
      const secret = await context.secrets.today();
      const visitor = visitorHash(secret, host.hostname, addressOf(), userAgent());
      const since = `${dayOf(Date.now())}T00:00:00.000Z`;
      returning = (await seenToday(context.db, { tenantId: host.tenantId, visitor, since })).length > 0;
    } else {
      company = await companyForVisit(context.companyLookup, host.tenantId, addressOf());
    }
  };

  const valueNow = (field: string): FieldValue => {
    const [group = '', name = ''] = splitField(field);
    switch (group) {
      case 'utm':
        return param(`utm_${name}`) || null;
      case 'query':
        return param(name) || null;
      case 'referrer':
        return name === 'host' ? sourceNow().referrerHost || null : sourceNow().channel;
      case 'visitor':
        if (name === 'channelGroup') return sourceNow().channelGroup;
        if (name === 'country') return country || null;
        if (name === 'device') return deviceOf(userAgent()).deviceType;
        if (name === 'language') return languageOf(first(request.headers['accept-language']));
        return returning;
      case 'company': {
        const got = company?.[name as keyof Company];
        return got === undefined ? null : got;
      }
      default:
        return null;
    }
  };
  // A page's segments (50 at full scale) and a site's experiences mostly ask the same field: each
  // read from the request is worked out once. The looked-up facts are not kept here: `prepare`
  // sets them after a rule may have asked.
  let known: Map<string, FieldValue> | undefined;
  const value = (field: string): FieldValue => {
    const kept = known?.get(field);
    if (kept !== undefined) return kept;
    const found = valueNow(field);
    if (!COSTLY.has(field) && !field.startsWith('company.')) {
      known ??= new Map();
      known.set(field, found);
    }
    return found;
  };

  return {
    async prepare(fields, withCompany) {
      const jobs: Promise<void>[] = [];
      for (const field of fields) {
        if (!looksUp(field)) continue;
        // Each costly fact is looked up once per request, whoever asks first.
        // The address goes to the provider only by the one exit rule (events/may-leave.ts).
        const job = field.startsWith('company.')
          ? mayLeave({ exit: 'enrichment.visit', gpc, needed: withCompany })
            ? 'company'
            : undefined
          : field;
        if (job === undefined || started.has(job)) continue;
        const running = lookUp(job);
        started.set(job, running);
      }
      for (const running of started.values()) jobs.push(running);
      await Promise.all(jobs);
    },
    value,
    withheld: (field) => gpc && field.startsWith('company.'),
    token: (name) => tokenOf(name, value, country),
    visitorKey: async () => visitorKey(await context.secrets.today(), host.hostname, addressOf(), userAgent()),
  };
}

/** A visit token's value held to the value rule (`{{visitor.country}}` shows the country's name); null: its fallback. */
function tokenOf(name: string, value: (field: string) => FieldValue, country: string): string | null {
  const raw = name === 'visitor.country' ? countryName(country) : value(name);
  if (typeof raw !== 'string') return null;
  const trimmed = raw.trim();
  return FILLABLE.test(trimmed) ? trimmed : null;
}

/**
 * The facts of a visit described rather than made (a preview as a visitor, issue 46), matched and
 * filled by the same rules as a request's: what it leaves out, it does not say (its referrer,
 * language and return among them); nothing is looked up and nothing is withheld.
 */
export function describedVisit(visit: PreviewVisit): VisitFacts {
  const said = (got: string | number | undefined): FieldValue => (typeof got === 'string' ? got.trim() || null : (got ?? null));
  const value = (field: string): FieldValue => {
    const [group = '', name = ''] = splitField(field);
    const own = <T extends object>(of: T | undefined) => (of && Object.hasOwn(of, name) ? of[name as keyof T] : undefined);
    switch (group) {
      case 'utm':
        return said(own(visit.utm));
      case 'query':
        return said(own(visit.query));
      case 'visitor':
        if (name === 'country') return visit.country ?? null;
        if (name === 'device') return visit.device ?? null;
        return null;
      case 'company':
        return said(own(visit.company));
      default:
        return null;
    }
  };
  return {
    prepare: async () => {},
    value,
    withheld: () => false,
    token: (name) => tokenOf(name, value, visit.country ?? ''),
  };
}

function splitField(field: string): [string, string] {
  const dot = field.indexOf('.');
  return [field.slice(0, dot), field.slice(dot + 1)];
}

/** The first tag of `Accept-Language` (`de-DE` of `de-DE,de;q=0.9`), lowercased; null without one. */
function languageOf(header: string): string | null {
  const tag = header.split(',', 1)[0]?.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  return /^[a-z]{1,8}(?:-[a-z0-9]{1,8})*$/.test(tag) ? tag : null;
}
