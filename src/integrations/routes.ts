import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { conflict, notFound } from '../http/errors.js';
import { createOnce, fromHeader, IdempotencyHeaders, sendOnce } from '../http/idempotency.js';
import { EmptyBody, NoContent, responses } from '../http/schemas.js';
import {
  createIntegration,
  deleteIntegration,
  findIntegration,
  type IntegrationsContext,
  listIntegrations,
  requestSync,
  toIntegration,
  updateIntegration,
} from './repository.js';
import { Integration, IntegrationCreate, IntegrationListQuery, IntegrationPage, IntegrationParams, IntegrationUpdate } from './schemas.js';

const tags = ['integrations'];
const extension = { tags, 'x-extension': true };

/** CRM integrations (issue 40, docs/integrations.md); `wake` runs this process's sync at once. */
export const integrationRoutes: FastifyPluginAsyncTypebox<IntegrationsContext & { wake: () => void }> = async (
  app,
  { wake, ...context },
) => {
  app.get(
    '/v0/integrations',
    {
      schema: {
        ...extension,
        operationId: 'listIntegrations',
        summary: 'List CRM integrations (extension)',
        querystring: IntegrationListQuery,
        response: responses({ 200: IntegrationPage }),
      },
    },
    async (request) => listIntegrations(app.db, request.tenantId, request.query),
  );

  app.post(
    '/v0/integrations',
    {
      schema: {
        headers: IdempotencyHeaders,
        ...extension,
        operationId: 'createIntegration',
        summary: 'Connect a CRM (extension)',
        description:
          'HubSpot takes `accessToken`; Salesforce takes `clientId`, `clientSecret` and `instanceUrl`. Credentials are stored encrypted and never returned.',
        body: IntegrationCreate,
        response: responses({ 201: Integration }),
      },
    },
    async (request, reply) => {
      const result = await createOnce(app.db, fromHeader(request), (trx) =>
        createIntegration(trx, request.tenantId, request.body, context),
      );
      wake();
      return sendOnce(reply, result);
    },
  );

  app.get(
    '/v0/integrations/:integration_id',
    {
      schema: {
        ...extension,
        operationId: 'getIntegration',
        summary: 'Get a CRM integration, with its last sync (extension)',
        params: IntegrationParams,
        response: responses({ 200: Integration }),
      },
    },
    async (request) => {
      const row = await findIntegration(app.db, request.tenantId, request.params.integration_id);
      if (!row) throw notFound('Integration');
      return toIntegration(row);
    },
  );

  app.patch(
    '/v0/integrations/:integration_id',
    {
      schema: {
        ...extension,
        operationId: 'updateIntegration',
        summary: 'Pause, resume or rotate the credentials of a CRM integration (extension)',
        params: IntegrationParams,
        body: IntegrationUpdate,
        response: responses({ 200: Integration }),
      },
    },
    async (request) => {
      const integration = await app.db
        .transaction()
        .execute((trx) => updateIntegration(trx, request.tenantId, request.params.integration_id, request.body, context));
      if (!integration) throw notFound('Integration');
      wake();
      return integration;
    },
  );

  app.delete(
    '/v0/integrations/:integration_id',
    {
      schema: {
        ...extension,
        operationId: 'deleteIntegration',
        summary: 'Disconnect a CRM (extension)',
        params: IntegrationParams,
        response: responses({ 204: NoContent }),
      },
    },
    async (request, reply) => {
      const deleted = await app.db.transaction().execute((trx) => deleteIntegration(trx, request.tenantId, request.params.integration_id));
      if (!deleted) throw notFound('Integration');
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v0/integrations/:integration_id/sync',
    {
      schema: {
        headers: IdempotencyHeaders,
        ...extension,
        operationId: 'syncIntegration',
        summary: 'Run a sync of a CRM integration now (extension)',
        description:
          'Accepted: the sync runs in the background; `lastSyncAt` and `lastError` tell how it went. A paused integration is 409.',
        params: IntegrationParams,
        body: EmptyBody,
        response: responses({ 202: Integration }),
      },
    },
    async (request, reply) => {
      const result = await createOnce(app.db, fromHeader(request, 202), async (trx) => {
        const synced = await requestSync(trx, request.tenantId, request.params.integration_id);
        if (synced) return synced;
        if (!(await findIntegration(trx, request.tenantId, request.params.integration_id))) throw notFound('Integration');
        throw conflict('The integration is paused: resume it (PATCH status "active") first');
      });
      wake();
      return sendOnce(reply, result);
    },
  );
};
