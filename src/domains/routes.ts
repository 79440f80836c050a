import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../http/errors.js';
import { createOnce, fromHeader, IdempotencyHeaders, sendOnce } from '../http/idempotency.js';
import { ListEnvelope, NoContent, responses } from '../http/schemas.js';
import type { TxtLookup } from './dns.js';
import type { HostnameRules } from './hostnames.js';
import { createDomain, deleteDomain, type DomainWiring, findDomain, listDomains } from './repository.js';
import { TenantDomain, TenantDomainCreate, TenantDomainListQuery, TenantDomainParams } from './schemas.js';
import { checkRecord, markVerifiedOf } from './verification.js';

const extension = { tags: ['page links'], 'x-extension': true };

/** One plugin, listed in app.ts; the route rules (API key, query parameters, dispatcher wake-ups) are in src/http/route-rules.ts. */
export const domainRoutes: FastifyPluginAsyncTypebox<{
  rules: HostnameRules;
  lookup: TxtLookup;
  wiring: DomainWiring;
}> = async (app, { rules, lookup, wiring }) => {
  app.get(
    '/v0/tenant_domains',
    {
      schema: {
        ...extension,
        operationId: 'listTenantDomains',
        summary: 'List tenant domains (extension)',
        querystring: TenantDomainListQuery,
        response: responses({ 200: ListEnvelope(TenantDomain) }),
      },
    },
    async (request) => listDomains(app.db, request.tenantId, request.query, wiring.routing),
  );

  app.post(
    '/v0/tenant_domains',
    {
      schema: {
        ...extension,
        operationId: 'createTenantDomain',
        headers: IdempotencyHeaders,
        summary: 'Add a custom domain (extension)',
        description:
          'Takes a host name, or an https:// address with nothing after the host (`https://go.acme.com/` is `go.acme.com`). ' +
          'The answer names both records to create: `verification` (the TXT proof) and `routing` (the CNAME, or A record, that sends visitors here; SITE_CNAME_TARGET).',
        body: TenantDomainCreate,
        response: responses({ 201: TenantDomain }),
      },
    },
    async (request, reply) => {
      const result = await createOnce(app.db, fromHeader(request), (trx) =>
        createDomain(trx, request.tenantId, request.body.hostname, rules, wiring.routing),
      );
      return sendOnce(reply, result);
    },
  );

  app.post(
    '/v0/tenant_domains/:tenant_domain_id/verify',
    {
      schema: {
        ...extension,
        operationId: 'verifyTenantDomain',
        headers: IdempotencyHeaders,
        summary: 'Verify a custom domain by its DNS TXT record (extension)',
        description:
          'Looks up the TXT record named in `verification` (5 s at most). Found with its value: the domain is verified and served from now on. ' +
          'Not found: 409 `domain_not_verified`, saying what the look-up found. A verified domain answers as it is.',
        params: TenantDomainParams,
        response: responses({ 200: TenantDomain }),
      },
    },
    async (request, reply) => {
      const { tenantId } = request;
      const id = request.params.tenant_domain_id;
      await checkRecord(app.db, lookup, tenantId, id);
      const result = await createOnce(app.db, fromHeader(request, 200), (trx) => markVerifiedOf(trx, wiring, tenantId, id));
      return sendOnce(reply, result);
    },
  );

  app.delete(
    '/v0/tenant_domains/:tenant_domain_id',
    {
      schema: {
        ...extension,
        operationId: 'deleteTenantDomain',
        summary: 'Remove a custom domain and its page links (extension)',
        params: TenantDomainParams,
        response: responses({ 204: NoContent }),
      },
    },
    async (request, reply) => {
      await app.db.transaction().execute(async (trx) => {
        const domain = await findDomain(trx, request.tenantId, request.params.tenant_domain_id);
        if (!domain) throw notFound('Tenant domain');
        await deleteDomain(trx, wiring.dropLinks, domain);
      });
      return reply.code(204).send(null);
    },
  );
};
