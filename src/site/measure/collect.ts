import type { FastifyInstance } from 'fastify';
import { isbot } from 'isbot';
import { validatorCompiler } from '../../http/validation.js';
import { MAX_REPORT_BYTES, Report, visitStore } from '../../visits/index.js';
import { notModified, type SiteContext, siteHostOf } from '../context.js';
import { addressLimiter, takeFor } from '../limits.js';
import { MEASURING_SCRIPT, MEASURING_SCRIPT_ETAG, VITALS_SCRIPT, VITALS_SCRIPT_ETAG } from './script.js';
import { seenClasses } from './classify.js';

/**
 * `GET /_pam/v.js` and `POST /_pam/collect`. Registered in buildSite; its parsers, validator and
 * error answers are its own (encapsulated), so the other visitor routes keep theirs.
 */
export async function collectRoutes(site: FastifyInstance, context: SiteContext): Promise<void> {
  const { trusted } = context;
  const limiter = addressLimiter(context.config.collectRatePerMinute);
  // The ingest port: how a report is kept is the store's (src/visits/), not this plane's.
  const store = visitStore(context.db);

  for (const [url, script, etag] of [
    ['/_pam/v.js', MEASURING_SCRIPT, MEASURING_SCRIPT_ETAG],
    ['/_pam/wv.js', VITALS_SCRIPT, VITALS_SCRIPT_ETAG],
  ] as const) {
    site.get(url, async (request, reply) => {
      reply.header('content-type', 'text/javascript; charset=utf-8').header('cache-control', 'public, max-age=86400').header('etag', etag);
      if (notModified(request, etag)) return reply.code(304).send();
      return reply.send(script);
    });
  }

  // A beacon says text/plain; both that and application/json bodies are the report's JSON.
  site.removeAllContentTypeParsers();
  site.addContentTypeParser(['text/plain', 'application/json'], { parseAs: 'string' }, (_request, body, done) => {
    let nul = false;
    let report: unknown;
    // JSON holds a NUL only as the escape \u0000 (a raw one is not JSON): most reports skip the reviver.
    const check = (body as string).includes('\\u0000');
    try {
      report = check
        ? JSON.parse(body as string, (key, value) => {
            if (key.includes('\u0000') || (typeof value === 'string' && value.includes('\u0000'))) nul = true;
            return value;
          })
        : JSON.parse(body as string);
    } catch {
      return done(Object.assign(new Error('The report is not JSON'), { statusCode: 400 }));
    }
    // PostgreSQL can neither store nor compare a NUL: refused on both databases alike.
    if (nul) return done(Object.assign(new Error('A report holds no NUL character'), { statusCode: 400 }));
    done(null, report);
  });
  site.setValidatorCompiler(validatorCompiler);
  site.setErrorHandler((err, request, reply) => {
    const given = (err as { statusCode?: unknown }).statusCode;
    const status = typeof given === 'number' && given >= 400 && given < 500 ? given : 500;
    context.observe?.report(status === 500 ? 'error' : 'invalid_report');
    if (status === 500) {
      request.log.error({ err }, 'visit report failed');
      return reply.code(500).type('text/plain; charset=utf-8').send('The report could not be recorded.');
    }
    // A body over the limit is bad input like any other (the 400).
    return reply
      .code(status === 413 ? 400 : status)
      .type('text/plain; charset=utf-8')
      .send(status === 413 ? `A report is at most ${MAX_REPORT_BYTES} bytes.` : reportProblem(err));
  });

  site.post<{ Body: Report }>(
    '/_pam/collect',
    {
      bodyLimit: MAX_REPORT_BYTES,
      schema: { body: Report },
      // Before the body is read: a flood costs a bucket look-up, a bot nothing at all.
      onRequest: async (request, reply) => {
        const bucket = takeFor(limiter, trusted, request.raw);
        if (!bucket.allowed) {
          context.observe?.report('rate_limited');
          return reply
            .code(429)
            .header('retry-after', String(bucket.retryAfterSeconds))
            .type('text/plain; charset=utf-8')
            .send('Too many reports.');
        }
        if (isbot(request.headers['user-agent'] ?? '')) {
          context.observe?.report('bot');
          return reply.code(204).send();
        }
      },
    },
    async (request, reply) => {
      const claims = context.tokens.verify(request.body.token);
      const host = siteHostOf(request);
      if (!claims || claims.tenantId !== host.tenantId) {
        context.observe?.report('invalid_token');
        return reply.code(400).type('text/plain; charset=utf-8').send('The token is not valid here.');
      }
      const report = request.body;
      const recorded = await store.record({
        claims,
        report,
        origin: context.origin(host.hostname, request.raw),
        gpc: request.headers['sec-gpc'] === '1',
        idleSeconds: context.config.sessionIdleSeconds,
        // Today's secret is in memory after the first report of the day.
        seer: async () => {
          const secret = await context.secrets.today();
          return (personId) =>
            seenClasses(context, request, {
              secret,
              hostname: host.hostname,
              personId,
              referrer: report.referrer ?? '',
              adClick: report.adClick === true,
              utmMedium: report.utmMedium ?? '',
              utmSource: report.utmSource ?? '',
              utmCampaign: report.utmCampaign ?? '',
            });
        },
      });
      context.observe?.report(recorded === 'accepted' ? 'accepted' : 'page_gone');
      return reply.code(204).send();
    },
  );
}

/** The first bad field of a report, by its JSON pointer; never echoes a value. */
function reportProblem(err: unknown): string {
  const first = (err as { validation?: { instancePath?: string; message?: string }[] }).validation?.[0];
  if (!first) return 'The report is not valid.';
  return `The report's ${first.instancePath || 'body'} ${first.message ?? 'is not valid'}.`;
}
