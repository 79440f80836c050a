import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { TenantDomain, TenantDomainParams, type DomainWiring, attestDomain } from '../domains/index.js';
import { adminAuth } from '../http/auth.js';
import { notFound } from '../http/errors.js';
import { ListEnvelope, ListQuery, NoContent, responses } from '../http/schemas.js';
import { checkKeyOptions, createApiKey, createTenant, getTenant, listApiKeys, listTenants, revokeApiKey } from './repository.js';
import { ApiKey, ApiKeyCreate, ApiKeyCreated, ApiKeyIdParams, Tenant, TenantCreate, TenantCreated, TenantIdParams } from './schemas.js';

const tags = ['admin'];
const security = [{ adminToken: [] }];

/**
 * Tenants and API keys; registered only when ADMIN_TOKEN is set. One plugin, listed in app.ts; the
 * route rules (query parameters, dispatcher wake-ups) are in src/http/route-rules.ts.
 */
export const adminRoutes: FastifyPluginAsyncTypebox<{ adminToken: string; domains: DomainWiring }> = async (
  app,
  { adminToken, domains },
) => {
  app.addHook('onRequest', adminAuth(adminToken));

  app.post(
    '/admin/tenants',
    {
      schema: {
        tags,
        security,
        operationId: 'createTenant',
        summary: 'Create a tenant and its first API key',
        body: TenantCreate,
        response: responses({ 201: TenantCreated }),
      },
    },
    async (request, reply) => {
      const created = await app.db.transaction().execute(async (trx) => {
        const tenant = await createTenant(trx, request.body.name, app.config.fallbackDomainSuffix);
        return { tenant, ...(await createApiKey(trx, tenant.tenantId)) };
      });
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/admin/tenants',
    {
      schema: {
        tags,
        security,
        operationId: 'listTenants',
        summary: 'List tenants',
        querystring: ListQuery({}),
        response: responses({ 200: ListEnvelope(Tenant) }),
      },
    },
    async (request) => listTenants(app.db, request.query),
  );

  app.post(
    '/admin/tenants/:tenantId/api_keys',
    {
      schema: {
        tags,
        security,
        operationId: 'createApiKey',
        summary: 'Create an API key for a tenant',
        params: TenantIdParams,
        body: ApiKeyCreate,
        response: responses({ 201: ApiKeyCreated }),
      },
    },
    async (request, reply) => {
      const options = checkKeyOptions(request.body ?? {});
      if (!(await getTenant(app.db, request.params.tenantId))) throw notFound('Tenant');
      return reply.code(201).send(await createApiKey(app.db, request.params.tenantId, options));
    },
  );

  app.get(
    '/admin/tenants/:tenantId/api_keys',
    {
      schema: {
        tags,
        security,
        operationId: 'listApiKeys',
        summary: "List a tenant's API keys (never the keys themselves)",
        params: TenantIdParams,
        querystring: ListQuery({}),
        response: responses({ 200: ListEnvelope(ApiKey) }),
      },
    },
    async (request) => {
      if (!(await getTenant(app.db, request.params.tenantId))) throw notFound('Tenant');
      return listApiKeys(app.db, request.params.tenantId, request.query);
    },
  );

  app.delete(
    '/admin/api_keys/:apiKeyId',
    {
      schema: {
        tags,
        security,
        operationId: 'revokeApiKey',
        summary: 'Revoke an API key (at once)',
        params: ApiKeyIdParams,
        response: responses({ 204: NoContent }),
      },
    },
    async (request, reply) => {
      if (!(await revokeApiKey(app.db, request.params.apiKeyId))) throw notFound('API key');
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/admin/tenant_domains/:tenant_domain_id/verify',
    {
      schema: {
        tags,
        security,
        operationId: 'attestTenantDomain',
        summary: "Verify a tenant's custom domain without its DNS record (the operator attests it)",
        params: TenantDomainParams,
        response: responses({ 200: TenantDomain }),
      },
    },
    async (request) => attestDomain(app.db, domains, request.params.tenant_domain_id),
  );
};
