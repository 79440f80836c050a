import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { findFile } from '../assets/repository.js';
import { isIdShaped } from '../ids.js';
import type { SiteContext } from './app.js';
import { documentCache } from './cache.js';
import { siteHostOf } from './dispatch.js';
import { formTarget, leadErrors, parseLeadPost, recordLead } from './forms.js';
import { gonePage, notFoundPage, siteErrorPage } from './pages.js';
import { documentAt, type Documents, notModified, pathOf, sendDocument } from './serve.js';
import { outcomeMemo } from './memo.js';

const notFound = (reply: FastifyReply) => reply.code(404).type('text/html; charset=utf-8').send(notFoundPage());
// Never cached by anyone, never indexed: the page it replaces may have been either.
const gone = (reply: FastifyReply) =>
  reply
    .code(410)
    .header('cache-control', 'no-store')
    .header('x-robots-tag', 'noindex, nofollow')
    .type('text/html; charset=utf-8')
    .send(gonePage());
const badRequest = (reply: FastifyReply) => reply.code(400).type('text/html; charset=utf-8').send(siteErrorPage(400));

/** Every method a visitor path does not take: 405 before any body is read. */
const OTHER_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/**
 * The visitor plane's documents, files and lead forms (issue 15, "Serving" and "Lead forms").
 * Registered by buildSite with the site's context.
 */
export const documentRoutes: FastifyPluginAsync<SiteContext> = async (site, context) => {
  const cache = documentCache();
  const documents: Documents = { cache, memo: outcomeMemo() };
  context.observe?.watchDocuments(() => ({ cache: cache.stats(), memo: documents.memo.stats() }));
  site.addHook('onClose', async () => {
    context.log.info({ documentCache: cache.stats() }, 'site document cache');
  });

  site.get('/*', async (request, reply) => {
    const host = siteHostOf(request);
    const path = pathOf(request.url);
    if (path === undefined) return notFound(reply);
    const submitted = (request.query as Record<string, unknown>).submitted === '1';
    const outcome = await documentAt(context, documents, host, path, { submitted });
    if (!outcome) return notFound(reply);
    if (outcome.kind === 'redirect') return reply.code(308).header('location', encodeURI(outcome.location)).send();
    if (outcome.kind === 'gone') return gone(reply);
    return sendDocument(request, reply, context, outcome);
  });

  for (const variant of ['original', 'preview'] as const) {
    site.get<{ Params: { fileId: string } }>(
      variant === 'original' ? '/_pam/files/:fileId' : '/_pam/files/:fileId/preview',
      (request, reply) => sendFile(context, request, reply, variant),
    );
  }

  site.post('/_pam/forms', async (request, reply) => {
    const host = siteHostOf(request);
    if (!String(request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) return badRequest(reply);
    const post = parseLeadPost(request.body);
    const claims = context.tokens.verify(post.token);
    if (!claims || claims.tenantId !== host.tenantId) return badRequest(reply);
    const target = await formTarget(context.db, claims, post.actionId);
    if (!target) return notFound(reply);
    // The path the form was on, if it still shows this page to this audience: never anywhere else.
    const errors = leadErrors(post.fields);
    const outcome = post.path.startsWith('/')
      ? await documentAt(context, documents, host, post.path, {
          submitted: false,
          ...(errors ? { form: { submitted: false, actionId: post.actionId, errors, fields: post.fields } } : {}),
        })
      : undefined;
    const served =
      outcome?.kind === 'document' && outcome.stamp.pageId === claims.pageId && outcome.stamp.audienceId === claims.audienceId
        ? outcome
        : undefined;
    if (errors) return served ? sendDocument(request, reply, context, served, 400, post.token) : badRequest(reply);
    await recordLead(context.db, claims, target, post.fields, {
      pageUrl: `https://${host.hostname}${served ? post.path : ''}`,
      pageTitle: served?.rendered.title ?? target.page.title,
    });
    return reply
      .code(303)
      .header('location', `${encodeURI(served ? post.path : '/')}?submitted=1`)
      .send();
  });

  site.route({
    method: [...OTHER_METHODS],
    url: '/*',
    // Answered before any body is read: a visitor path takes no body of any type.
    onRequest: async (_request, reply) => {
      await reply.code(405).header('allow', 'GET, HEAD').type('text/html; charset=utf-8').send(siteErrorPage(405));
    },
    handler: async () => undefined,
  });
};

/** A file of this domain's tenant, immutable under its id: cached for a year, revalidated by its hash. */
async function sendFile(
  context: SiteContext,
  request: FastifyRequest<{ Params: { fileId: string } }>,
  reply: FastifyReply,
  variant: 'original' | 'preview',
) {
  const host = siteHostOf(request);
  const { fileId } = request.params;
  const file = isIdShaped(fileId) ? await findFile(context.db, fileId) : undefined;
  const contentType = variant === 'original' ? file?.content_type : file?.preview_content_type;
  if (!file || file.tenant_id !== host.tenantId || !contentType) return notFound(reply);
  const etag = `"${file.sha256}${variant === 'preview' ? '-preview' : ''}"`;
  reply
    .header('cache-control', 'public, max-age=31536000, immutable')
    .header('etag', etag)
    .header('content-security-policy', "default-src 'none'");
  if (notModified(request, etag)) return reply.code(304).send();
  const bytes = await context.stores.byName[file.store].get(variant === 'original' ? file.id : `${file.id}.preview`);
  if (!bytes) return notFound(reply);
  return reply.type(contentType).send(bytes);
}
