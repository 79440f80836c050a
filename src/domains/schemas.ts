import { Type, type Static } from '@sinclair/typebox';
import { ListQuery, Timestamp } from '../http/schemas.js';

export const TenantDomain = Type.Object(
  {
    tenantDomainId: Type.String(),
    hostname: Type.String(),
    isFallback: Type.Boolean({ description: "The tenant's own `<slug>.<FALLBACK_DOMAIN_SUFFIX>` hostname, made with the tenant" }),
    createdAt: Timestamp,
  },
  { $id: 'TenantDomain' },
);
export type TenantDomain = Static<typeof TenantDomain>;

export const TenantDomainCreate = Type.Object(
  { hostname: Type.String({ minLength: 1, maxLength: 253, description: 'A DNS name, unique across all tenants' }) },
  { additionalProperties: false, $id: 'TenantDomainCreate' },
);
export type TenantDomainCreate = Static<typeof TenantDomainCreate>;

export const TenantDomainListQuery = ListQuery({});
export type TenantDomainListQuery = Static<typeof TenantDomainListQuery>;

export const TenantDomainParams = Type.Object({ tenant_domain_id: Type.String() });
