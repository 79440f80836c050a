import type { FastifyInstance, FastifyReply } from 'fastify';
import { type SiteContext, siteHostOf } from '../context.js';
import { addressLimiter, takeFor } from '../limits.js';
import { locationOnHost, staysOnHost } from '../location.js';
import { formRateLimitedPage, notFoundPage, siteErrorPage } from '../pages.js';
import { documentAt, type Documents } from '../serve/documents.js';
import { keptQuery, sendDocument } from '../serve/send.js';
import { confirmationId, titleOf } from '../../render/index.js';
import { visitFacts } from '../serve/visit.js';
import { defaultCountryOf } from '../../site-settings/index.js';
import { sentGpc } from '../../events/index.js';
import { enrichmentOfLead } from '../../leads/index.js';
import { checkLeadFields, formTarget, parseLeadPost, recordLead } from './leads.js';
import { stillShown } from './shown.js';

const notFound = (reply: FastifyReply) => reply.code(404).type('text/html; charset=utf-8').send(notFoundPage());
const badRequest = (reply: FastifyReply) => reply.code(400).type('text/html; charset=utf-8').send(siteErrorPage(400));

/** `POST /_pam/forms`: a lead form posted without JavaScript (issue 15), and its limits (issue 25). */
export function formRoutes(site: FastifyInstance, context: SiteContext, documents: Documents): void {
  const limiter = addressLimiter(context.config.formRatePerMinute);

  site.post(
    '/_pam/forms',
    {
      // Before the body is read: a flood costs a bucket look-up.
      onRequest: async (request, reply) => {
        const bucket = takeFor(limiter, context.trusted, request.raw);
        if (bucket.allowed) return;
        return reply
          .code(429)
          .header('retry-after', String(bucket.retryAfterSeconds))
          .type('text/html; charset=utf-8')
          .send(formRateLimitedPage(bucket.retryAfterSeconds));
      },
    },
    async (request, reply) => {
      const host = siteHostOf(request);
      if (!String(request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) return badRequest(reply);
      const post = parseLeadPost(request.body);
      if (!post) return badRequest(reply);
      const claims = context.tokens.verify(post.token);
      if (!claims || claims.tenantId !== host.tenantId) return badRequest(reply);
      const target = await formTarget(context.db, claims, post.actionId);
      if (!target) return notFound(reply);
      const origin = context.origin(host.hostname, request.raw);
      // The URL the form was on: its path, if it still shows this page to this audience (never
      // anywhere else), and its query, kept so that the thank-you is the version the visitor was shown.
      const { path, query } = splitFormPath(post.path);
      const checked = checkLeadFields(post.fields, await defaultCountryOf(context.db, claims.tenantId));
      const errors = 'errors' in checked ? checked.errors : undefined;
      const facts = visitFacts(context, request, host);
      // Shown again with its errors, the document is rendered; else resolving the path tells whether it still shows.
      const outcome =
        errors && staysOnHost(path)
          ? await documentAt(context, documents, host, path, {
              submitted: false,
              origin,
              visitorKey: facts.visitorKey,
              facts,
              preferredSegment: claims.audienceId,
              form: { submitted: false, actionId: post.actionId, errors, fields: post.fields },
            })
          : undefined;
      const served =
        outcome?.kind === 'document' && outcome.visit.pageId === claims.pageId && outcome.visit.audienceId === claims.audienceId
          ? outcome
          : undefined;
      const shown = errors ? served !== undefined : await stillShown(context.db, host, path, claims, target);
      // 303 to the same URL, marked submitted, at the confirmation (document.ts): in view at once.
      const thanks = () =>
        reply
          .code(303)
          .header(
            'location',
            shown && staysOnHost(path)
              ? `${locationOnHost(path)}${query === '' ? '?' : `${query}&`}submitted=1#${encodeURIComponent(confirmationId(post.actionId))}`
              : '/?submitted=1',
          )
          .send();
      // A bot filled the field people never see: it is told what a person would be, and nothing is kept.
      if (post.honeypot !== '') return thanks();
      if (errors) return served ? sendDocument(request, reply, context, served, () => query, 400, post.token) : badRequest(reply);
      // A repeat of this token within the window gets the same thank-you, and writes nothing.
      if (!('fields' in checked)) return badRequest(reply);
      // Asked before the lead's transaction, within the provider's timeout: the thank-you waits that long at most.
      const enrichment = await enrichmentOfLead(
        context.db,
        context.enrichment,
        claims.tenantId,
        checked.fields.email,
        sentGpc(request.headers),
      );
      await recordLead(
        context.db,
        claims,
        target,
        checked.fields,
        { pageUrl: `${origin}${shown ? path : ''}`, pageTitle: shown ? titleOf(target.page, target.audience) : target.page.title },
        enrichment,
        sentGpc(request.headers),
      );
      return thanks();
    },
  );
}

/**
 * The form's `path` field: the path the form was served at, then the query of that URL when it had
 * one (document.ts fills it per response). The query comes back re-encoded, without `submitted`.
 */
function splitFormPath(value: string): { path: string; query: string } {
  const at = value.indexOf('?');
  if (at === -1) return { path: value, query: '' };
  return { path: value.slice(0, at), query: keptQuery(value.slice(at + 1)) };
}
