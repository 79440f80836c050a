import { createHash } from 'node:crypto';
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Static } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { AppError, invalidField, notFound } from '../http/errors.js';
import type { PublicOrigin } from '../http/public-origin.js';
import { htmlResponses, responses } from '../http/schemas.js';
import { IdempotencyHeaders } from '../http/idempotency.js';
import { registerFormJsonBody } from '../http/json-body.js';
import { checkedDraft, type PreviewDraft } from './draft.js';
import type { PreviewVisit } from './preview-visit.js';
import type { PreviewLinks, PreviewRefusal } from './preview-links.js';
import { PageParams, PagePreviewBody, PagePreviewDraft, PagePreviewLink, PagePreviewQuery, PreviewLinkQuery } from './schemas.js';

type Found<T> = Promise<{ audience: false } | ({ audience: true } & T) | undefined>;

/**
 * The rendering of previews (src/site/preview.ts), handed in by app.ts rather than imported: it
 * reads audiences and persons, areas above this one. Undefined: no such page; `audience: false`:
 * the audience is not one of the page's. `styles`: the texts of the document's `<style>` elements.
 */
export interface Previews {
  exists(db: Kysely<Database>, tenantId: string, pageId: string, audienceId: string | undefined): Found<object>;
  document(
    db: Kysely<Database>,
    tenantId: string,
    pageId: string,
    audienceId: string | undefined,
    origin: (hostname: string) => string,
    draft?: PreviewDraft,
    visit?: PreviewVisit,
  ): Found<{ html: string; styles: string[]; origin: string; shownAudienceId: string | null }>;
}

const REFUSED: Record<PreviewRefusal, string> = {
  forged: 'The preview link is not genuine (its signature does not match what it names); open the preview again for a fresh one',
  expired: 'The preview link has expired (links last five minutes); open the preview again for a fresh one',
};

/**
 * The policy of a preview opened by its link: nothing may run or load but the document's own
 * `<style>` elements (by their hashes) and images (this origin's, https, and the public origin of
 * the tenant's fallback domain, which serves its files), it can be framed by this origin only (the
 * console), and `sandbox` keeps it scriptless and without forms even when opened on its own.
 */
function previewPolicy(styles: string[], files: string): string {
  const hashes = styles.map((css) => `'sha256-${createHash('sha256').update(css).digest('base64')}'`);
  return [
    "default-src 'none'",
    `style-src ${hashes.join(' ')}`,
    `img-src 'self' data: https:${files.startsWith('http:') ? ` ${files}` : ''}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'self'",
    'sandbox',
  ].join('; ');
}

/** Names the audience a preview shows (the one a visit chose); absent: the page itself. */
const SHOWN_HEADER = 'x-pam-audience-id';

/** A visit chooses the audience, as a served page's visit does: naming one as well is a contradiction. */
function oneChooser(audienceId: string | undefined, visit: PreviewVisit | undefined) {
  if (audienceId !== undefined && visit !== undefined)
    throw invalidField('/audienceId', 'must be left out with `visit`: the visit chooses the audience, as a served page does');
}

/** An API preview's document, never kept nor indexed, framed by the console only; or why there is none. */
function sendDocument(reply: FastifyReply, preview: Awaited<ReturnType<Previews['document']>>) {
  if (!preview) throw notFound('Page');
  if (!preview.audience) throw invalidField('/audienceId', 'is not an audience of this page');
  if (preview.shownAudienceId !== null) reply.header(SHOWN_HEADER, preview.shownAudienceId);
  return reply
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('x-robots-tag', 'noindex, nofollow')
    .header('content-security-policy', "frame-ancestors 'self'")
    .send(preview.html);
}

/**
 * `GET /v0/pages/{page_id}/preview`: an API route (API key, read scope, on the API host) that
 * renders what the visitor plane would serve, through the rendering both share (src/render/), so
 * the pages area never imports the visitor plane. `GET .../preview_link` hands out a short-lived
 * link to the same document, which `GET /previews/{page_id}` answers without a key: a browser can
 * then show it as a document of its own (the console's iframe), under the policy above instead
 * of the console's. Registered by pageRoutes, which is handed the rendering and the links.
 */
export const previewRoutes: FastifyPluginAsyncTypebox<{ previews: Previews; links: PreviewLinks; origin: PublicOrigin }> = async (
  app,
  { previews, links, origin },
) => {
  app.get(
    '/v0/pages/:page_id/preview',
    {
      schema: {
        tags: ['pages'],
        'x-extension': true,
        operationId: 'previewPage',
        summary: 'Preview a page as a visitor would get it, in any status (extension)',
        description:
          'The HTML document of the page for the audience (none without `audienceId`), without the measuring script, always `noindex`.',
        params: PageParams,
        querystring: PagePreviewQuery,
        response: htmlResponses('The document, as a visitor would get it'),
      },
    },
    async (request, reply) => {
      const preview = await previews.document(app.db, request.tenantId, request.params.page_id, request.query.audienceId, (hostname) =>
        origin(hostname, request.raw),
      );
      return sendDocument(reply, preview);
    },
  );

  app.post(
    '/v0/pages/:page_id/preview',
    {
      schema: {
        headers: IdempotencyHeaders,
        tags: ['pages'],
        'x-extension': true,
        operationId: 'previewPageDraft',
        summary: 'Preview unsaved content as a visitor would get it (extension)',
        description:
          "The document `GET .../preview` answers, with the body's content (and actions, when sent) in place of the stored ones, for the audience (none without `audienceId`). The content is checked as `PATCH` checks it (400 at its pointer) and nothing is written: an `Idempotency-Key` is accepted and replays nothing. With `visit` (and no `audienceId`), the visit chooses: the first segment it matches, else the home audience, else the page, as a served page chooses, its `{{utm.*}}`, `{{query.*}}`, `{{visitor.country}}` and `{{company.*}}` tokens filled from it; the header `x-pam-audience-id` names the audience shown (absent: the page itself).",
        params: PageParams,
        body: PagePreviewBody,
        response: htmlResponses('The document, as a visitor would get it with this content'),
      },
    },
    async (request, reply) => {
      const { audienceId, ...body } = request.body;
      oneChooser(audienceId, body.visit);
      const draft = await checkedDraft(app.db, request.tenantId, request.params.page_id, body);
      if (!draft) throw notFound('Page');
      const preview = await previews.document(
        app.db,
        request.tenantId,
        request.params.page_id,
        audienceId,
        (hostname) => origin(hostname, request.raw),
        draft,
        body.visit,
      );
      return sendDocument(reply, preview);
    },
  );

  app.get(
    '/v0/pages/:page_id/preview_link',
    {
      schema: {
        tags: ['pages'],
        'x-extension': true,
        operationId: 'getPagePreviewLink',
        summary: "A short-lived link to a page's preview, opened without an API key (extension)",
        description:
          'A read, like the preview itself: a read-only key gets one. The link answers the same document as `GET .../preview`, for five minutes, under a Content-Security-Policy of its own that allows its inline styles and no script, framed by this origin only.',
        params: PageParams,
        querystring: PagePreviewQuery,
        response: responses({ 200: PagePreviewLink }),
      },
    },
    async (request, reply) => {
      const { page_id: pageId } = request.params;
      const found = await previews.exists(app.db, request.tenantId, pageId, request.query.audienceId);
      if (!found) throw notFound('Page');
      if (!found.audience) throw invalidField('/audienceId', 'is not an audience of this page');
      return reply.header('cache-control', 'no-store').send(links.issue(request.tenantId, pageId, request.query.audienceId));
    },
  );

  /** A preview link's document under its own policy; `draft`: unsaved content in place of the stored. */
  const openLink = async (request: LinkRequest, reply: FastifyReply, draft?: PagePreviewDraft) => {
    const { page_id: pageId } = request.params;
    const { tenantId, audienceId } = request.query;
    const refused = links.refusal({ ...request.query, pageId, audienceId });
    if (refused) throw new AppError('forbidden', REFUSED[refused]);
    oneChooser(audienceId, draft?.visit);
    const checked = draft && (await checkedDraft(app.db, tenantId, pageId, draft));
    if (draft && !checked) throw notFound('Page');
    const toOrigin = (hostname: string) => origin(hostname, request.raw);
    const preview = await previews.document(app.db, tenantId, pageId, audienceId, toOrigin, checked, draft?.visit);
    if (!preview) throw notFound('Page');
    if (!preview.audience) throw notFound('Audience');
    return reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('x-robots-tag', 'noindex, nofollow')
      .header('content-security-policy', previewPolicy(preview.styles, preview.origin))
      .header('x-frame-options', 'SAMEORIGIN')
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .send(preview.html);
  };

  app.get(
    '/previews/:page_id',
    {
      schema: {
        tags: ['pages'],
        'x-extension': true,
        operationId: 'openPagePreviewLink',
        summary: 'A page preview, by the link GET .../preview_link handed out (extension)',
        description:
          'No API key: the link is the credential. 403 when it is not genuine or has expired (the detail says which); 404 when its page or audience is gone.',
        security: [],
        params: PageParams,
        querystring: PreviewLinkQuery,
        response: htmlResponses('The document, as a visitor would get it, under its own policy'),
      },
    },
    async (request, reply) => openLink(request, reply),
  );

  // The console's live preview: a form posted into its sandboxed frame, so that the unsaved
  // content arrives as a document of its own, under the link's policy (a `srcdoc` or blob frame
  // would inherit the console's, which refuses the page's inline styles). The link is the
  // credential, as for GET; the field `draft` holds the JSON of PagePreviewDraft. Not in the
  // OpenAPI document: it is the console's plumbing; `POST /v0/pages/{page_id}/preview` is the API's.
  await app.register(async (form) => {
    registerFormJsonBody(form, 'draft');
    form
      .withTypeProvider<TypeBoxTypeProvider>()
      .post(
        '/previews/:page_id',
        { schema: { hide: true, params: PageParams, querystring: PreviewLinkQuery, body: PagePreviewDraft } },
        async (request, reply) => openLink(request, reply, request.body),
      );
  });
};

interface LinkRequest {
  params: Static<typeof PageParams>;
  query: Static<typeof PreviewLinkQuery>;
  raw: FastifyRequest['raw'];
}
