import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../http/errors.js';
import { ListEnvelope, responses } from '../http/schemas.js';
import { createPerson, getPerson, listPersons, updatePerson } from './repository.js';
import { Person, PersonCreate, PersonListQuery, PersonParams, PersonUpdate } from './schemas.js';

const tags = ['persons'];

/** One plugin, listed in app.ts; the route rules (API key, query parameters, dispatcher wake-ups) are in src/http/route-rules.ts. */
export const personRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/v0/persons',
    {
      schema: { tags, operationId: 'createPerson', summary: 'Create person', body: PersonCreate, response: responses({ 201: Person }) },
    },
    async (request, reply) => {
      const person = await app.db.transaction().execute((trx) => createPerson(trx, request.tenantId, request.body));
      return reply.code(201).send(person);
    },
  );

  app.get(
    '/v0/persons/:person_id',
    {
      schema: { tags, operationId: 'getPerson', summary: 'Get person', params: PersonParams, response: responses({ 200: Person }) },
    },
    async (request) => {
      const person = await getPerson(app.db, request.tenantId, request.params.person_id);
      if (!person) throw notFound('Person');
      return person;
    },
  );

  app.patch(
    '/v0/persons/:person_id',
    {
      schema: {
        tags,
        operationId: 'updatePerson',
        summary: 'Update person',
        params: PersonParams,
        body: PersonUpdate,
        response: responses({ 200: Person }),
      },
    },
    async (request) => {
      const person = await app.db
        .transaction()
        .execute((trx) => updatePerson(trx, request.tenantId, request.params.person_id, request.body));
      if (!person) throw notFound('Person');
      return person;
    },
  );

  app.get(
    '/v0/persons',
    {
      schema: {
        tags: [...tags, 'extension'],
        operationId: 'listPersons',
        summary: 'List persons (extension)',
        querystring: PersonListQuery,
        response: responses({ 200: ListEnvelope(Person) }),
      },
    },
    async (request) => listPersons(app.db, request.tenantId, request.query),
  );
};
