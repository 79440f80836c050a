import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Timestamp } from '../http/schemas.js';

export const Tenant = Type.Object({
  tenantId: Type.String(),
  name: Type.String(),
  slug: Type.String({ description: 'Derived from the name, unique across the service' }),
  createdAt: Timestamp,
});
export type Tenant = Static<typeof Tenant>;

export const TenantCreate = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 255 }) },
  { additionalProperties: false },
);
export type TenantCreate = Static<typeof TenantCreate>;

export const ApiKeyCreated = Type.Object({
  apiKey: Type.String({ description: 'The plain key: shown in this response only' }),
  apiKeyId: Type.String(),
});

export const TenantCreated = Type.Object({
  tenant: Tenant,
  apiKey: Type.String({ description: 'The plain key: shown in this response only' }),
  apiKeyId: Type.String(),
});

/** No options yet; an empty body, `{}` or no body at all are all accepted. */
export const ApiKeyCreate = Nullable(Type.Object({}, { additionalProperties: false }));

export const TenantIdParams = Type.Object({ tenantId: Type.String() });
export const ApiKeyIdParams = Type.Object({ apiKeyId: Type.String() });
