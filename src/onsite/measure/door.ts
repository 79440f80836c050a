import type { FastifyInstance } from 'fastify';
import { isbot } from 'isbot';
import type { Config } from '../../config.js';
import { trustedProxies } from '../../http/proxies.js';
import { validatorCompiler } from '../../http/validation.js';
import { findPersonByEmail } from '../../persons/index.js';
import { addressLimiter, takeFor } from '../../site/index.js';
import { MAX_REPORT_BYTES } from '../../visits/index.js';
import { decisionTokens } from '../decision-token.js';
import { ExperienceReport } from './schemas.js';
import { siteOriginsOf } from './lookups.js';
import { recordReport } from './store.js';

/** Where the site script reports (`pamReport`), on the API host beside `/_pam/decide`. */
export const REPORT_PATH = '/_pam/x';

/**
 * `POST /_pam/x`: the site script's reports, measured as served pages' are (src/site/measure/collect.ts):
 * text/plain JSON (a beacon: no preflight), at most 2 KB, rate-limited per address, bots dropped,
 * the same plain-text answers for bad input. A report counts only with a genuine decision token
 * and from one of its site's origins (the Origin header a browser sets on a cross-origin POST).
 * Its own plugin, so that its parsers and error answers stay its own.
 */
export async function reportDoor(app: FastifyInstance, options: { secret: string; config: Config }): Promise<void> {
  const tokens = decisionTokens(options.secret);
  const trusted = trustedProxies(options.config.trustProxy);
  const limiter = addressLimiter(options.config.collectRatePerMinute);
  const plain = 'text/plain; charset=utf-8';

  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['text/plain', 'application/json'], { parseAs: 'string' }, (_request, body, done) => {
    try {
      const report: unknown = JSON.parse(body as string);
      // PostgreSQL can neither store nor compare a NUL: refused on both databases alike.
      if ((body as string).includes('\\u0000'))
        return done(Object.assign(new Error('A report holds no NUL character'), { statusCode: 400 }));
      done(null, report);
    } catch {
      done(Object.assign(new Error('The report is not JSON'), { statusCode: 400 }));
    }
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setErrorHandler((err, request, reply) => {
    const given = (err as { statusCode?: unknown }).statusCode;
    const status = typeof given === 'number' && given >= 400 && given < 500 ? given : 500;
    if (status === 500) {
      request.log.error({ err }, 'experience report failed');
      return reply.code(500).type(plain).send('The report could not be recorded.');
    }
    return reply
      .code(status === 413 ? 400 : status)
      .type(plain)
      .send(status === 413 ? `A report is at most ${MAX_REPORT_BYTES} bytes.` : reportProblem(err));
  });

  app.post<{ Body: ExperienceReport }>(
    REPORT_PATH,
    {
      bodyLimit: MAX_REPORT_BYTES,
      schema: { body: ExperienceReport, hide: true },
      onRequest: async (request, reply) => {
        const bucket = takeFor(limiter, trusted, request.raw);
        if (!bucket.allowed) {
          return reply.code(429).header('retry-after', String(bucket.retryAfterSeconds)).type(plain).send('Too many reports.');
        }
        if (isbot(request.headers['user-agent'] ?? '')) return reply.code(204).send();
      },
    },
    async (request, reply) => {
      const claims = tokens.verify(request.body.token);
      if (!claims) return reply.code(400).type(plain).send('The token is not valid here.');
      const origin = request.headers.origin;
      const origins = await siteOriginsOf(app.db, claims.tenantId, claims.siteId);
      if (origin === undefined || origins === undefined || !origins.includes(origin)) {
        return reply.code(403).type(plain).send("The report does not come from one of the site's origins.");
      }
      // The answer is never read by a beacon; a fetch from the site may read its status.
      reply.header('access-control-allow-origin', origin).header('vary', 'Origin');
      // A marketer's preview is shown, not measured.
      if (claims.preview === true) return reply.code(204).send();
      const { identify } = request.body;
      const person = identify === undefined ? undefined : await findPersonByEmail(app.db, claims.tenantId, identify);
      await recordReport(app.db, {
        claims,
        token: request.body.token,
        clicks: request.body.clicks ?? {},
        conversions: request.body.conversions ?? 0,
        accountDomain: person?.domain_lc ?? undefined,
        at: new Date().toISOString(),
      });
      return reply.code(204).send();
    },
  );
}

/** The first bad field of a report, by its JSON pointer; never echoes a value. */
function reportProblem(err: unknown): string {
  const first = (err as { validation?: { instancePath?: string; message?: string }[] }).validation?.[0];
  if (!first) return err instanceof Error && err.message ? err.message : 'The report is not valid.';
  return `The report's ${first.instancePath || 'body'} ${first.message ?? 'is not valid'}.`;
}
