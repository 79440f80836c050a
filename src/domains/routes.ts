import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ListEnvelope, responses } from '../http/schemas.js';
import { createDomain, listDomains } from './repository.js';
import { TenantDomain, TenantDomainCreate, TenantDomainListQuery } from './schemas.js';

const tags = ['page links', 'extension'];

/** One plugin, listed in app.ts; the route rules (API key, query parameters, dispatcher wake-ups) are in src/http/route-rules.ts. */
export const domainRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/v0/tenant_domains',
    {
      schema: {
        tags,
        operationId: 'listTenantDomains',
        summary: 'List tenant domains (extension)',
        querystring: TenantDomainListQuery,
        response: responses({ 200: ListEnvelope(TenantDomain) }),
      },
    },
    async (request) => listDomains(app.db, request.tenantId, request.query),
  );

  app.post(
    '/v0/tenant_domains',
    {
      schema: {
        tags,
        operationId: 'createTenantDomain',
        summary: 'Add a custom domain (extension)',
        body: TenantDomainCreate,
        response: responses({ 201: TenantDomain }),
      },
    },
    async (request, reply) => {
      return reply.code(201).send(await createDomain(app.db, request.tenantId, request.body.hostname));
    },
  );
};
