import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createOnce, fromHeader, IdempotencyHeaders, sendOnce } from '../http/idempotency.js';
import { notFound } from '../http/errors.js';
import { ListEnvelope, NoContent, responses } from '../http/schemas.js';
import { erasePerson, type ForgetLeads } from './erasure.js';
import { createPerson, getPerson, listPersons, reservePersonSlug, searchPersons, updatePerson } from './repository.js';
import { Person, PersonCreate, PersonListQuery, PersonParams, PersonSearchQuery, PersonUpdate } from './schemas.js';

const tags = ['persons'];

/** One plugin, listed in app.ts; the route rules (API key, query parameters, dispatcher wake-ups) are in src/http/route-rules.ts. */
export const personRoutes: FastifyPluginAsyncTypebox<{ forgetLeads: ForgetLeads }> = async (app, { forgetLeads }) => {
  app.post(
    '/v0/persons',
    {
      schema: {
        headers: IdempotencyHeaders,
        tags,
        operationId: 'createPerson',
        summary: 'Create person',
        body: PersonCreate,
        response: responses({ 201: Person }),
      },
    },
    async (request, reply) => {
      const slug = await reservePersonSlug(app.db, request.tenantId, request.body.name);
      return sendOnce(
        reply,
        await createOnce(app.db, fromHeader(request), (trx) => createPerson(trx, request.tenantId, request.body, slug)),
      );
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

  app.delete(
    '/v0/persons/:person_id',
    {
      schema: {
        tags,
        'x-extension': true,
        operationId: 'erasePerson',
        summary: 'Erase person: their data, logs, form submissions and events (extension)',
        description: 'What erasure removes and what it cannot recall: docs/privacy.md.',
        params: PersonParams,
        response: responses({ 204: NoContent }),
      },
    },
    async (request, reply) => {
      const erased = await app.db.transaction().execute((trx) => erasePerson(trx, request.tenantId, request.params.person_id, forgetLeads));
      if (!erased) throw notFound('Person');
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/v0/persons',
    {
      schema: {
        tags,
        'x-extension': true,
        operationId: 'listPersons',
        summary: 'List persons (extension)',
        querystring: PersonListQuery,
        response: responses({ 200: ListEnvelope(Person) }),
      },
    },
    async (request) => listPersons(app.db, request.tenantId, request.query),
  );

  app.get(
    '/v0/persons/search',
    {
      schema: {
        tags,
        'x-extension': true,
        operationId: 'searchPersons',
        summary: 'Search persons (extension)',
        querystring: PersonSearchQuery,
        response: responses({ 200: ListEnvelope(Person) }),
      },
    },
    async (request) => searchPersons(app.db, request.tenantId, request.query),
  );
};
