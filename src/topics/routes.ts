import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createOnce, fromHeader, IdempotencyHeaders, sendOnce } from '../http/idempotency.js';
import { notFound } from '../http/errors.js';
import { ListEnvelope, NoContent, responses } from '../http/schemas.js';
import {
  createEntry,
  createTopic,
  deleteEntry,
  deleteTopic,
  findEntry,
  findTopic,
  getTopic,
  listEntries,
  listTopics,
  toEntry,
  updateEntry,
  updateTopic,
} from './repository.js';
import {
  Topic,
  TopicCreate,
  TopicEntry,
  TopicEntryCreate,
  TopicEntryParams,
  TopicEntryUpdate,
  TopicListQuery,
  TopicParams,
  TopicUpdate,
} from './schemas.js';

const tags = ['topics'];

/** One plugin, listed in app.ts; the route rules (API key, query parameters, dispatcher wake-ups) are in src/http/route-rules.ts. */
export const topicRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/v0/topics',
    {
      schema: {
        tags,
        operationId: 'listTopics',
        summary: 'List topics',
        querystring: TopicListQuery,
        response: responses({ 200: ListEnvelope(Topic) }),
      },
    },
    async (request) => listTopics(app.db, request.tenantId, request.query),
  );

  app.post(
    '/v0/topics',
    {
      schema: {
        headers: IdempotencyHeaders,
        tags,
        operationId: 'createTopic',
        summary: 'Create topic',
        body: TopicCreate,
        response: responses({ 201: Topic }),
      },
    },
    async (request, reply) => {
      return sendOnce(reply, await createOnce(app.db, fromHeader(request), (trx) => createTopic(trx, request.tenantId, request.body)));
    },
  );

  app.get(
    '/v0/topics/:topic_id/entries',
    {
      schema: {
        tags,
        operationId: 'listTopicEntries',
        summary: 'List topic entries',
        params: TopicParams,
        querystring: TopicListQuery,
        response: responses({ 200: ListEnvelope(TopicEntry) }),
      },
    },
    async (request) => {
      const topic = await findTopic(app.db, request.tenantId, request.params.topic_id);
      if (!topic) throw notFound('Topic');
      return listEntries(app.db, topic, request.query);
    },
  );

  app.post(
    '/v0/topics/:topic_id/entries',
    {
      schema: {
        headers: IdempotencyHeaders,
        tags,
        'x-extension': true,
        operationId: 'createTopicEntry',
        summary: 'Create topic entry (extension)',
        params: TopicParams,
        body: TopicEntryCreate,
        response: responses({ 201: TopicEntry }),
      },
    },
    async (request, reply) => {
      const result = await createOnce(app.db, fromHeader(request), async (trx) => {
        const topic = await findTopic(trx, request.tenantId, request.params.topic_id);
        if (!topic) throw notFound('Topic');
        return createEntry(trx, topic, request.body);
      });
      return sendOnce(reply, result);
    },
  );
  const extension = { tags, 'x-extension': true };

  async function topicOf(db: typeof app.db, tenantId: string, topicId: string) {
    const topic = await findTopic(db, tenantId, topicId);
    if (!topic) throw notFound('Topic');
    return topic;
  }

  async function entryOf(db: typeof app.db, tenantId: string, params: { topic_id: string; topic_entry_id: string }) {
    const topic = await topicOf(db, tenantId, params.topic_id);
    const entry = await findEntry(db, topic, params.topic_entry_id);
    if (!entry) throw notFound('Topic entry');
    return { topic, entry };
  }

  app.get(
    '/v0/topics/:topic_id',
    {
      schema: {
        ...extension,
        operationId: 'getTopic',
        summary: 'Get topic, with its entries (extension)',
        params: TopicParams,
        response: responses({ 200: Topic }),
      },
    },
    async (request) => getTopic(app.db, await topicOf(app.db, request.tenantId, request.params.topic_id)),
  );

  app.patch(
    '/v0/topics/:topic_id',
    {
      schema: {
        ...extension,
        operationId: 'updateTopic',
        summary: 'Update topic (extension)',
        params: TopicParams,
        body: TopicUpdate,
        response: responses({ 200: Topic }),
      },
    },
    async (request) =>
      app.db
        .transaction()
        .execute(async (trx) => updateTopic(trx, await topicOf(trx, request.tenantId, request.params.topic_id), request.body)),
  );

  app.delete(
    '/v0/topics/:topic_id',
    {
      schema: {
        ...extension,
        operationId: 'deleteTopic',
        summary: 'Delete topic and its entries; not the default topic (extension)',
        params: TopicParams,
        response: responses({ 204: NoContent }),
      },
    },
    async (request, reply) => {
      await app.db.transaction().execute(async (trx) => deleteTopic(trx, await topicOf(trx, request.tenantId, request.params.topic_id)));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/v0/topics/:topic_id/entries/:topic_entry_id',
    {
      schema: {
        ...extension,
        operationId: 'getTopicEntry',
        summary: 'Get topic entry (extension)',
        params: TopicEntryParams,
        response: responses({ 200: TopicEntry }),
      },
    },
    async (request) => toEntry((await entryOf(app.db, request.tenantId, request.params)).entry),
  );

  app.patch(
    '/v0/topics/:topic_id/entries/:topic_entry_id',
    {
      schema: {
        ...extension,
        operationId: 'updateTopicEntry',
        summary: 'Update topic entry (extension)',
        params: TopicEntryParams,
        body: TopicEntryUpdate,
        response: responses({ 200: TopicEntry }),
      },
    },
    async (request) =>
      app.db.transaction().execute(async (trx) => {
        const { topic, entry } = await entryOf(trx, request.tenantId, request.params);
        return updateEntry(trx, topic, entry, request.body);
      }),
  );

  app.delete(
    '/v0/topics/:topic_id/entries/:topic_entry_id',
    {
      schema: {
        ...extension,
        operationId: 'deleteTopicEntry',
        summary: 'Delete topic entry (extension)',
        params: TopicEntryParams,
        response: responses({ 204: NoContent }),
      },
    },
    async (request, reply) => {
      await app.db.transaction().execute(async (trx) => {
        const { topic, entry } = await entryOf(trx, request.tenantId, request.params);
        await deleteEntry(trx, topic, entry);
      });
      return reply.code(204).send(null);
    },
  );
};
