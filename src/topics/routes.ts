import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createOnce, fromHeader, IdempotencyHeaders, sendOnce } from '../http/idempotency.js';
import { notFound } from '../http/errors.js';
import { ListEnvelope, responses } from '../http/schemas.js';
import { createEntry, createTopic, findTopic, listEntries, listTopics } from './repository.js';
import { Topic, TopicCreate, TopicEntry, TopicEntryCreate, TopicListQuery, TopicParams } from './schemas.js';

const tags = ['topics'];

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
        tags: [...tags, 'extension'],
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
};
