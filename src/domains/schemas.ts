import { Type, type Static } from '@sinclair/typebox';
import { DOMAIN_STATUSES } from '../db/enums.js';
import { ListQuery, Nullable, NullableTimestamp, StringEnum, Timestamp } from '../http/schemas.js';

/** The DNS record that proves a tenant holds a name: published by the tenant, looked up by `verify`. */
export const DomainVerification = Type.Object(
  {
    recordType: Type.Literal('TXT'),
    name: Type.String({ description: '`_pam-verify.<hostname>`' }),
    value: Type.String({ description: '`pam-verify=<token>`: the whole TXT value to publish' }),
  },
  { description: 'What to publish in DNS to verify a pending domain; null once verified' },
);

export const TenantDomain = Type.Object(
  {
    tenantDomainId: Type.String(),
    hostname: Type.String(),
    isFallback: Type.Boolean({ description: "The tenant's own `<slug>.<FALLBACK_DOMAIN_SUFFIX>` hostname, made with the tenant" }),
    status: StringEnum(DOMAIN_STATUSES, {
      description: 'Only a verified domain is served; a custom domain starts pending, a fallback domain is always verified',
    }),
    verifiedAt: NullableTimestamp,
    verification: Nullable(DomainVerification),
    createdAt: Timestamp,
  },
  { $id: 'TenantDomain' },
);
export type TenantDomain = Static<typeof TenantDomain>;

export const TenantDomainCreate = Type.Object(
  {
    hostname: Type.String({
      minLength: 1,
      maxLength: 253,
      description: 'A DNS name; not an IP address, localhost, a name under the fallback suffix, the service host or a reserved name',
    }),
  },
  { additionalProperties: false, $id: 'TenantDomainCreate' },
);
export type TenantDomainCreate = Static<typeof TenantDomainCreate>;

export const TenantDomainListQuery = ListQuery({});
export type TenantDomainListQuery = Static<typeof TenantDomainListQuery>;

export const TenantDomainParams = Type.Object({ tenant_domain_id: Type.String() });
