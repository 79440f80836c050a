import { Type, type Static } from '@sinclair/typebox';
import { INTEGRATION_PROVIDERS, INTEGRATION_STATUSES } from '../db/enums.js';
import { ListEnvelope, ListQuery, Nullable, StringEnum, Timestamp } from '../http/schemas.js';
import { RoundTrip } from '../http/round-trip.js';

const Secret = (description: string) => Type.String({ minLength: 1, maxLength: 1024, pattern: '^[\\x21-\\x7e]+$', description });
const AccessToken = Secret("HubSpot: the private app's access token (write-only: never returned)");
const ClientId = Secret("Salesforce: the connected app's consumer key (write-only: never returned)");
const ClientSecret = Secret("Salesforce: the connected app's consumer secret (write-only: never returned)");
const InstanceUrl = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: "Salesforce: the org's My Domain address, https://<name>.my.salesforce.com",
});

export const Integration = Type.Object(
  {
    integrationId: Type.String(),
    provider: StringEnum(INTEGRATION_PROVIDERS),
    status: StringEnum(INTEGRATION_STATUSES, {
      description: 'paused: no sync runs (set by a client, or by the CRM refusing the credentials)',
    }),
    instanceUrl: Nullable(Type.String({ description: 'Salesforce only' })),
    lastSyncAt: Nullable(Timestamp),
    lastError: Nullable(Type.String()),
    lastErrorAt: Nullable(Timestamp),
    nextSyncAt: Nullable(Timestamp),
    counts: Type.Object({
      leadsPushed: Type.Integer({ minimum: 0, description: 'Leads sent to the CRM, each once' }),
      dealsSynced: Type.Integer({
        minimum: 0,
        description: 'Distinct deals read from this CRM and written as deals (a deal read again counts once)',
      }),
    }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Integration' },
);
export type Integration = Static<typeof Integration>;

export const IntegrationCreate = Type.Object(
  {
    provider: StringEnum(INTEGRATION_PROVIDERS),
    accessToken: Type.Optional(AccessToken),
    clientId: Type.Optional(ClientId),
    clientSecret: Type.Optional(ClientSecret),
    instanceUrl: Type.Optional(InstanceUrl),
  },
  { additionalProperties: false, $id: 'IntegrationCreate' },
);
export type IntegrationCreate = Static<typeof IntegrationCreate>;

/** Pause or resume, and rotate the credentials (each given replaces the stored one). */
export const IntegrationUpdate = RoundTrip(
  Integration,
  Type.Object(
    {
      status: Type.Optional(StringEnum(INTEGRATION_STATUSES)),
      accessToken: Type.Optional(AccessToken),
      clientId: Type.Optional(ClientId),
      clientSecret: Type.Optional(ClientSecret),
      // Null as read for HubSpot, so that a read can be sent back; never a change.
      instanceUrl: Type.Optional(Nullable(InstanceUrl)),
    },
    { additionalProperties: false, $id: 'IntegrationUpdate' },
  ),
  { ignored: ['nextSyncAt', 'lastSyncAt', 'lastError', 'lastErrorAt', 'counts', 'updatedAt'] },
);
export type IntegrationUpdate = Static<typeof IntegrationUpdate>;

export const IntegrationListQuery = ListQuery({});
export type IntegrationListQuery = Static<typeof IntegrationListQuery>;
export const IntegrationPage = ListEnvelope(Integration);

export const IntegrationParams = Type.Object({ integration_id: Type.String({ minLength: 1, maxLength: 64 }) });
