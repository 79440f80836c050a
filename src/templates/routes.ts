import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../http/errors.js';
import { createOnce, fromHeader, IdempotencyHeaders, sendOnce } from '../http/idempotency.js';
import { ListEnvelope, NoContent, responses } from '../http/schemas.js';
import { createTemplate, deleteTemplate, getTemplate, listTemplates, updateTemplate } from './repository.js';
import { Template, TemplateCreate, TemplateListQuery, TemplateParams, TemplateSummary, TemplateUpdate } from './schemas.js';

const extension = { tags: ['templates'], 'x-extension': true };

/** One plugin, listed in app.ts; the route rules (API key, query parameters, dispatcher wake-ups) are in src/http/route-rules.ts. */
export const templateRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/v0/templates',
    {
      schema: {
        ...extension,
        operationId: 'listTemplates',
        summary: "List page templates: the built-ins first, then the tenant's own, newest first (extension)",
        description:
          'Each item is a template without its `content` (a TemplateSummary), unless `include=content` asks for it; `limit` is then at most 10.',
        querystring: TemplateListQuery,
        response: responses({ 200: ListEnvelope(TemplateSummary) }),
      },
    },
    async (request) => listTemplates(app.db, request.tenantId, request.query),
  );

  app.post(
    '/v0/templates',
    {
      schema: {
        ...extension,
        operationId: 'createTemplate',
        headers: IdempotencyHeaders,
        summary: "Save a page's content and actions as a template of the tenant (extension)",
        description:
          'A page made from it (POST /v0/pages with templateId) starts with them; later changes to the page do not change the template.',
        body: TemplateCreate,
        response: responses({ 201: Template }),
      },
    },
    async (request, reply) =>
      sendOnce(reply, await createOnce(app.db, fromHeader(request), (trx) => createTemplate(trx, request.tenantId, request.body))),
  );

  app.get(
    '/v0/templates/:template_id',
    {
      schema: {
        ...extension,
        operationId: 'getTemplate',
        summary: 'Get template (extension)',
        params: TemplateParams,
        response: responses({ 200: Template }),
      },
    },
    async (request) => {
      const template = await getTemplate(app.db, request.tenantId, request.params.template_id);
      if (!template) throw notFound('Template');
      return template;
    },
  );

  app.patch(
    '/v0/templates/:template_id',
    {
      schema: {
        ...extension,
        operationId: 'updateTemplate',
        summary: "Rename or redescribe one of the tenant's templates; a built-in is 409 (extension)",
        params: TemplateParams,
        body: TemplateUpdate,
        response: responses({ 200: Template }),
      },
    },
    async (request) => {
      const template = await app.db
        .transaction()
        .execute((trx) => updateTemplate(trx, request.tenantId, request.params.template_id, request.body));
      if (!template) throw notFound('Template');
      return template;
    },
  );

  app.delete(
    '/v0/templates/:template_id',
    {
      schema: {
        ...extension,
        operationId: 'deleteTemplate',
        summary: "Delete one of the tenant's templates; pages made from it stay as they are; a built-in is 409 (extension)",
        params: TemplateParams,
        response: responses({ 204: NoContent }),
      },
    },
    async (request, reply) => {
      const deleted = await app.db.transaction().execute((trx) => deleteTemplate(trx, request.tenantId, request.params.template_id));
      if (!deleted) throw notFound('Template');
      return reply.code(204).send(null);
    },
  );
};
