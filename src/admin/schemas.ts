import { Type, type Static } from '@sinclair/typebox';
import { Nullable, NullableTimestamp, StringEnum, Timestamp } from '../http/schemas.js';

export const Tenant = Type.Object(
  {
    tenantId: Type.String(),
    name: Type.String(),
    slug: Type.String({ description: 'Derived from the name, unique across the service' }),
    createdAt: Timestamp,
  },
  { $id: 'Tenant' },
);
export type Tenant = Static<typeof Tenant>;

export const TenantCreate = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 255 }) },
  { additionalProperties: false, $id: 'TenantCreate' },
);
export type TenantCreate = Static<typeof TenantCreate>;

export const SCOPES = ['read', 'write'] as const;
export type Scope = (typeof SCOPES)[number];
export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);

export const Scopes = Type.Array(StringEnum(SCOPES), {
  minItems: 1,
  uniqueItems: true,
  description: '["read"]: GET only; ["read", "write"]: everything (the default)',
});

/** What a key may do and how fast: as created, and as listed. */
const keySettings = {
  apiKeyId: Type.String(),
  scopes: Scopes,
  expiresAt: NullableTimestamp,
  rateLimitPerSecond: Nullable(Type.Integer({ description: 'Null: the configured default' })),
  rateLimitBurst: Nullable(Type.Integer()),
};

export const ApiKeyCreated = Type.Object(
  {
    apiKey: Type.String({ description: 'The plain key: shown in this response only' }),
    ...keySettings,
  },
  { $id: 'ApiKeyCreated' },
);

/** A key as the admin API lists it: never the key itself, only its first characters. */
export const ApiKey = Type.Object(
  {
    ...keySettings,
    keyPrefix: Type.String({ description: 'The first 8 characters of the key, to recognise it' }),
    createdAt: Timestamp,
    revokedAt: NullableTimestamp,
    /** Recorded at most once a minute, so up to a minute behind. */
    lastUsedAt: NullableTimestamp,
  },
  { $id: 'ApiKey' },
);
export type ApiKey = Static<typeof ApiKey>;

export const TenantCreated = Type.Object(
  {
    tenant: Tenant,
    apiKey: Type.String({ description: 'The plain key: shown in this response only' }),
    apiKeyId: Type.String(),
  },
  { $id: 'TenantCreated' },
);

/** Every option may be left out, and so may the body. */
export const ApiKeyCreate = Nullable(
  Type.Object(
    {
      scopes: Type.Optional(Scopes),
      expiresAt: Type.Optional(Type.String({ format: 'date-time', description: 'After this instant the key is refused (401)' })),
      rateLimitPerSecond: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000 })),
      rateLimitBurst: Type.Optional(Type.Integer({ minimum: 1, maximum: 20_000_000, description: "Defaults to twice the key's own rate" })),
    },
    { additionalProperties: false, $id: 'ApiKeyCreate' },
  ),
);
export type ApiKeyCreate = Static<typeof ApiKeyCreate>;

export const TenantIdParams = Type.Object({ tenantId: Type.String() });
export const ApiKeyIdParams = Type.Object({ apiKeyId: Type.String() });
