import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createOnce, fromHeader, IdempotencyHeaders, sendOnce } from '../http/idempotency.js';
import { notFound } from '../http/errors.js';
import { EmptyBody, ListEnvelope, NoContent, responses } from '../http/schemas.js';
import {
  createSubscription,
  deleteSubscription,
  findSubscription,
  listSubscriptions,
  rotateSecret,
  toSubscription,
  updateSubscription,
} from './repository.js';
import { listDeliveries, retryDelivery, sendTest } from './deliveries.js';
import {
  Delivery,
  DeliveryListQuery,
  DeliveryParams,
  SubscriptionParams,
  WebhookSubscription,
  WebhookSubscriptionCreate,
  WebhookSubscriptionListQuery,
  WebhookSubscriptionPage,
  WebhookSubscriptionUpdate,
  WebhookSubscriptionWithSecret,
} from './schemas.js';

const tags = ['webhooks'];
const extension = { tags, 'x-extension': true };

/** One plugin, listed in app.ts; the route rules (API key, query parameters, dispatcher wake-ups) are in src/http/route-rules.ts. */
export const webhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const urlRules = { allowHttp: app.config.webhookAllowHttp, allowPrivate: app.config.webhooks.allowPrivate };

  app.get(
    '/v0/webhook_subscriptions',
    {
      schema: {
        tags,
        operationId: 'listWebhookSubscriptions',
        summary: 'List webhook subscriptions',
        querystring: WebhookSubscriptionListQuery,
        response: responses({ 200: WebhookSubscriptionPage }),
      },
    },
    async (request) => listSubscriptions(app.db, request.tenantId, request.query),
  );

  app.post(
    '/v0/webhook_subscriptions',
    {
      schema: {
        headers: IdempotencyHeaders,
        ...extension,
        operationId: 'createWebhookSubscription',
        summary: 'Create webhook subscription (extension)',
        body: WebhookSubscriptionCreate,
        response: responses({ 201: WebhookSubscriptionWithSecret }),
      },
    },
    async (request, reply) =>
      sendOnce(
        reply,
        await createOnce(app.db, fromHeader(request), (trx) => createSubscription(trx, request.tenantId, request.body, urlRules)),
      ),
  );

  app.get(
    '/v0/webhook_subscriptions/:subscription_id',
    {
      schema: {
        ...extension,
        operationId: 'getWebhookSubscription',
        summary: 'Get webhook subscription (extension)',
        params: SubscriptionParams,
        response: responses({ 200: WebhookSubscription }),
      },
    },
    async (request) => {
      const row = await findSubscription(app.db, request.tenantId, request.params.subscription_id);
      if (!row) throw notFound('Webhook subscription');
      return toSubscription(row);
    },
  );

  app.patch(
    '/v0/webhook_subscriptions/:subscription_id',
    {
      schema: {
        ...extension,
        operationId: 'updateWebhookSubscription',
        summary: 'Update webhook subscription (extension)',
        params: SubscriptionParams,
        body: WebhookSubscriptionUpdate,
        response: responses({ 200: WebhookSubscription }),
      },
    },
    async (request) => {
      const subscription = await app.db
        .transaction()
        .execute((trx) => updateSubscription(trx, request.tenantId, request.params.subscription_id, request.body, urlRules));
      if (!subscription) throw notFound('Webhook subscription');
      return subscription;
    },
  );

  app.delete(
    '/v0/webhook_subscriptions/:subscription_id',
    {
      schema: {
        ...extension,
        operationId: 'deleteWebhookSubscription',
        summary: 'Delete webhook subscription (extension)',
        params: SubscriptionParams,
        response: responses({ 204: NoContent }),
      },
    },
    async (request, reply) => {
      if (!(await deleteSubscription(app.db, request.tenantId, request.params.subscription_id))) throw notFound('Webhook subscription');
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v0/webhook_subscriptions/:subscription_id/rotate_secret',
    {
      schema: {
        headers: IdempotencyHeaders,
        ...extension,
        operationId: 'rotateWebhookSecret',
        summary: 'Rotate the signing secret (extension)',
        params: SubscriptionParams,
        body: EmptyBody,
        response: responses({ 200: WebhookSubscriptionWithSecret }),
      },
    },
    async (request, reply) => {
      const result = await createOnce(app.db, fromHeader(request, 200), async (trx) => {
        const rotated = await rotateSecret(trx, request.tenantId, request.params.subscription_id);
        if (!rotated) throw notFound('Webhook subscription');
        return rotated;
      });
      return sendOnce(reply, result);
    },
  );

  async function subscriptionOf(tenantId: string, subscriptionId: string) {
    const row = await findSubscription(app.db, tenantId, subscriptionId);
    if (!row) throw notFound('Webhook subscription');
    return row;
  }

  app.get(
    '/v0/webhook_subscriptions/:subscription_id/deliveries',
    {
      schema: {
        ...extension,
        operationId: 'listWebhookDeliveries',
        summary: 'List deliveries of a subscription (extension)',
        params: SubscriptionParams,
        querystring: DeliveryListQuery,
        response: responses({ 200: ListEnvelope(Delivery) }),
      },
    },
    async (request) => listDeliveries(app.db, await subscriptionOf(request.tenantId, request.params.subscription_id), request.query),
  );

  app.post(
    '/v0/webhook_subscriptions/:subscription_id/deliveries/:delivery_id/retry',
    {
      schema: {
        headers: IdempotencyHeaders,
        ...extension,
        operationId: 'retryWebhookDelivery',
        summary: 'Send a finished delivery again now (extension)',
        params: DeliveryParams,
        body: EmptyBody,
        response: responses({ 200: Delivery }),
      },
    },
    async (request, reply) => {
      const subscription = await subscriptionOf(request.tenantId, request.params.subscription_id);
      const result = await createOnce(app.db, fromHeader(request, 200), async (trx) => {
        const delivery = await retryDelivery(trx, subscription, request.params.delivery_id);
        if (!delivery) throw notFound('Delivery');
        return delivery;
      });
      return sendOnce(reply, result);
    },
  );

  app.post(
    '/v0/webhook_subscriptions/:subscription_id/test',
    {
      schema: {
        headers: IdempotencyHeaders,
        ...extension,
        operationId: 'testWebhookSubscription',
        summary: 'Send a webhook.test event now (extension)',
        params: SubscriptionParams,
        body: EmptyBody,
        response: responses({ 200: Delivery }),
      },
    },
    async (request, reply) => {
      const subscription = await subscriptionOf(request.tenantId, request.params.subscription_id);
      return sendOnce(reply, await createOnce(app.db, fromHeader(request, 200), (trx) => sendTest(trx, subscription)));
    },
  );
};
