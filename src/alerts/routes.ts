import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Sealer } from '../integrations/index.js';
import { createOnce, fromHeader, IdempotencyHeaders, sendOnce } from '../http/idempotency.js';
import { notFound } from '../http/errors.js';
import { EmptyBody, ListEnvelope, NoContent, responses } from '../http/schemas.js';
import { createAlert, deleteAlert, findAlert, listAlerts, listMessages, sendTestMessage, toAlert, updateAlert } from './repository.js';
import { Alert, AlertCreate, AlertListQuery, AlertMessage, AlertMessageListQuery, AlertPage, AlertParams, AlertUpdate } from './schemas.js';

const tags = ['alerts'];
const extension = { tags, 'x-extension': true };

/** Sales alerts in Slack (issue 40): the resource, its messages, and a test message. */
export const alertRoutes: FastifyPluginAsyncTypebox<{ wake: () => void; sealer: Sealer }> = async (app, { wake, sealer }) => {
  const urlRules = { allowHttp: app.config.webhookAllowHttp, allowPrivate: app.config.webhooks.allowPrivate };

  async function alertOf(tenantId: string, alertId: string) {
    const row = await findAlert(app.db, tenantId, alertId);
    if (!row) throw notFound('Alert');
    return row;
  }

  app.get(
    '/v0/alerts',
    {
      schema: {
        ...extension,
        operationId: 'listAlerts',
        summary: 'List alerts (extension)',
        querystring: AlertListQuery,
        response: responses({ 200: AlertPage }),
      },
    },
    async (request) => listAlerts(app.db, request.tenantId, request.query),
  );

  app.post(
    '/v0/alerts',
    {
      schema: {
        headers: IdempotencyHeaders,
        ...extension,
        operationId: 'createAlert',
        summary: 'Create alert (extension)',
        body: AlertCreate,
        response: responses({ 201: Alert }),
      },
    },
    async (request, reply) =>
      sendOnce(
        reply,
        await createOnce(app.db, fromHeader(request), (trx) => createAlert(trx, request.tenantId, request.body, urlRules, sealer)),
      ),
  );

  app.get(
    '/v0/alerts/:alert_id',
    {
      schema: {
        ...extension,
        operationId: 'getAlert',
        summary: 'Get alert (extension)',
        params: AlertParams,
        response: responses({ 200: Alert }),
      },
    },
    async (request) => toAlert(await alertOf(request.tenantId, request.params.alert_id)),
  );

  app.patch(
    '/v0/alerts/:alert_id',
    {
      schema: {
        ...extension,
        operationId: 'updateAlert',
        summary: 'Update alert (extension)',
        params: AlertParams,
        body: AlertUpdate,
        response: responses({ 200: Alert }),
      },
    },
    async (request) => {
      const alert = await app.db
        .transaction()
        .execute((trx) => updateAlert(trx, request.tenantId, request.params.alert_id, request.body, urlRules, sealer));
      if (!alert) throw notFound('Alert');
      return alert;
    },
  );

  app.delete(
    '/v0/alerts/:alert_id',
    {
      schema: {
        ...extension,
        operationId: 'deleteAlert',
        summary: 'Delete alert (extension)',
        params: AlertParams,
        response: responses({ 204: NoContent }),
      },
    },
    async (request, reply) => {
      if (!(await deleteAlert(app.db, request.tenantId, request.params.alert_id))) throw notFound('Alert');
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/v0/alerts/:alert_id/messages',
    {
      schema: {
        ...extension,
        operationId: 'listAlertMessages',
        summary: "List an alert's messages (extension)",
        params: AlertParams,
        querystring: AlertMessageListQuery,
        response: responses({ 200: ListEnvelope(AlertMessage) }),
      },
    },
    async (request) => listMessages(app.db, await alertOf(request.tenantId, request.params.alert_id), request.query),
  );

  app.post(
    '/v0/alerts/:alert_id/test',
    {
      schema: {
        headers: IdempotencyHeaders,
        ...extension,
        operationId: 'testAlert',
        summary: 'Send a test message now (extension)',
        description: 'At most one a minute per alert: another within the minute is 429 with Retry-After.',
        params: AlertParams,
        body: EmptyBody,
        response: responses({ 202: AlertMessage }),
      },
    },
    async (request, reply) => {
      const alert = await alertOf(request.tenantId, request.params.alert_id);
      const sent = await sendOnce(reply, await createOnce(app.db, fromHeader(request, 202), (trx) => sendTestMessage(trx, alert)));
      wake();
      return sent;
    },
  );
};
