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

/** The DNS record that sends a custom domain's visitors to the service (extension). */
export const DomainRouting = Type.Object(
  {
    recordType: StringEnum(['CNAME', 'A', 'AAAA'] as const, {
      description: 'CNAME when SITE_CNAME_TARGET is a DNS name (and when it is unset), A or AAAA when it is an address',
    }),
    name: Type.String({ description: 'The hostname itself' }),
    value: Nullable(Type.String({ description: 'SITE_CNAME_TARGET; null when the operator has not set it: point the name at your proxy' })),
    instructions: Type.String({ description: 'What to create, in words' }),
  },
  {
    description:
      'The record to create at the DNS provider so visitors reach the pages (besides the TXT proof); null for the fallback domain, which the service names',
  },
);
export type DomainRouting = Static<typeof DomainRouting>;

const TenantDomainFields = {
  tenantDomainId: Type.String(),
  hostname: Type.String(),
  isFallback: Type.Boolean({ description: "The tenant's own `<slug>.<FALLBACK_DOMAIN_SUFFIX>` hostname, made with the tenant" }),
  status: StringEnum(DOMAIN_STATUSES, {
    description: 'Only a verified domain is served; a custom domain starts pending, a fallback domain is always verified',
  }),
  verifiedAt: NullableTimestamp,
  verification: Nullable(DomainVerification),
  createdAt: Timestamp,
};
/** A domain as stored, as events carry it: `routing` is the operator's set-up, added to API answers. */
export const TenantDomainRecord = Type.Object(TenantDomainFields);
export type TenantDomainRecord = Static<typeof TenantDomainRecord>;
export const TenantDomain = Type.Object({ ...TenantDomainFields, routing: Nullable(DomainRouting) }, { $id: 'TenantDomain' });
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
