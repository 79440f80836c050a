import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../http/errors.js';
import { ListEnvelope, responses } from '../http/schemas.js';
import { createEntry, createTopic, findTopic, listEntries, listTopics } from './repository.js';
import { Topic, TopicCreate, TopicEntry, TopicEntryCreate, TopicListQuery, TopicParams } from './schemas.js';

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
      schema: { tags, operationId: 'createTopic', summary: 'Create topic', body: TopicCreate, response: responses({ 201: Topic }) },
    },
    async (request, reply) => {
      const topic = await app.db.transaction().execute((trx) => createTopic(trx, request.tenantId, request.body));
      return reply.code(201).send(topic);
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
        tags: [...tags, 'extension'],
        operationId: 'createTopicEntry',
        summary: 'Create topic entry (extension)',
        params: TopicParams,
        body: TopicEntryCreate,
        response: responses({ 201: TopicEntry }),
      },
    },
    async (request, reply) => {
      const entry = await app.db.transaction().execute(async (trx) => {
        const topic = await findTopic(trx, request.tenantId, request.params.topic_id);
        if (!topic) throw notFound('Topic');
        return createEntry(trx, topic, request.body);
      });
      return reply.code(201).send(entry);
    },
  );
};
