import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../http/errors.js';
import { createOnce, fromHeader, IdempotencyHeaders, sendOnce } from '../http/idempotency.js';
import { ListEnvelope, NoContent, responses } from '../http/schemas.js';
import {
  createExperience,
  deleteExperience,
  deleteExperiencesOfSite,
  findExperience,
  listExperiences,
  toExperience,
  updateExperience,
} from './experiences-repository.js';
import {
  Experience,
  ExperienceCreate,
  ExperienceListQuery,
  ExperienceParams,
  ExperienceUpdate,
  Site,
  SiteCreate,
  SiteListQuery,
  SiteParams,
  SiteUpdate,
} from './schemas.js';
import { createSite, deleteSiteRow, findSite, listSites, toSite, updateSite } from './sites-repository.js';

const sites = { tags: ['sites'], 'x-extension': true };
const experiences = { tags: ['experiences'], 'x-extension': true };

export interface OnsiteOptions {
  /** PUBLIC_BASE_URL: where the snippet loads the script from. */
  publicBaseUrl: string;
}

/**
 * The customer's own site (issue 48): sites and the experiences applied on them. One plugin,
 * listed in app.ts; the route rules (API key, query parameters) are in src/http/route-rules.ts.
 * How the script and decisions work: docs/onsite.md.
 */
export const onsiteRoutes: FastifyPluginAsyncTypebox<OnsiteOptions> = async (app, { publicBaseUrl }) => {
  app.post(
    '/v0/sites',
    {
      schema: {
        ...sites,
        operationId: 'createSite',
        headers: IdempotencyHeaders,
        summary: 'Add a site to personalise (extension)',
        description: 'Answers the snippet to paste into the head of every page of the site: docs/onsite.md.',
        body: SiteCreate,
        response: responses({ 201: Site }),
      },
    },
    async (request, reply) =>
      sendOnce(
        reply,
        await createOnce(app.db, fromHeader(request), (trx) => createSite(trx, publicBaseUrl, request.tenantId, request.body)),
      ),
  );

  app.get(
    '/v0/sites/:site_id',
    {
      schema: { ...sites, operationId: 'getSite', summary: 'Get site (extension)', params: SiteParams, response: responses({ 200: Site }) },
    },
    async (request) => {
      const row = await findSite(app.db, request.tenantId, request.params.site_id);
      if (!row) throw notFound('Site');
      return toSite(publicBaseUrl, row);
    },
  );

  app.get(
    '/v0/sites',
    {
      schema: {
        ...sites,
        operationId: 'listSites',
        summary: 'List sites, newest first (extension)',
        querystring: SiteListQuery,
        response: responses({ 200: ListEnvelope(Site) }),
      },
    },
    async (request) => listSites(app.db, publicBaseUrl, request.tenantId, request.query),
  );

  app.patch(
    '/v0/sites/:site_id',
    {
      schema: {
        ...sites,
        operationId: 'updateSite',
        summary: 'Update site: name, origins (extension)',
        params: SiteParams,
        body: SiteUpdate,
        response: responses({ 200: Site }),
      },
    },
    async (request) =>
      app.db.transaction().execute(async (trx) => {
        const current = await findSite(trx, request.tenantId, request.params.site_id);
        if (!current) throw notFound('Site');
        return updateSite(trx, publicBaseUrl, current, request.body);
      }),
  );

  app.delete(
    '/v0/sites/:site_id',
    {
      schema: {
        ...sites,
        operationId: 'deleteSite',
        summary: 'Delete site and its experiences (extension)',
        description: "The site's snippet stops doing anything at once; its experiences are deleted with it.",
        params: SiteParams,
        response: responses({ 204: NoContent }),
      },
    },
    async (request, reply) => {
      await app.db.transaction().execute(async (trx) => {
        const current = await findSite(trx, request.tenantId, request.params.site_id);
        if (!current) throw notFound('Site');
        await deleteExperiencesOfSite(trx, current);
        await deleteSiteRow(trx, current);
      });
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v0/experiences',
    {
      schema: {
        ...experiences,
        operationId: 'createExperience',
        headers: IdempotencyHeaders,
        summary: 'Create experience: changes by selector on a site (extension)',
        description: 'Which pages (urlMatch), which visitors (rules, the segment grammar), what changes: docs/onsite.md.',
        body: ExperienceCreate,
        response: responses({ 201: Experience }),
      },
    },
    async (request, reply) =>
      sendOnce(reply, await createOnce(app.db, fromHeader(request), (trx) => createExperience(trx, request.tenantId, request.body))),
  );

  app.get(
    '/v0/experiences/:experience_id',
    {
      schema: {
        ...experiences,
        operationId: 'getExperience',
        summary: 'Get experience (extension)',
        params: ExperienceParams,
        response: responses({ 200: Experience }),
      },
    },
    async (request) => {
      const row = await findExperience(app.db, request.tenantId, request.params.experience_id);
      if (!row) throw notFound('Experience');
      return toExperience(row);
    },
  );

  app.get(
    '/v0/experiences',
    {
      schema: {
        ...experiences,
        operationId: 'listExperiences',
        summary: 'List experiences, newest first, of a site or all (extension)',
        querystring: ExperienceListQuery,
        response: responses({ 200: ListEnvelope(Experience) }),
      },
    },
    async (request) => listExperiences(app.db, request.tenantId, request.query),
  );

  app.patch(
    '/v0/experiences/:experience_id',
    {
      schema: {
        ...experiences,
        operationId: 'updateExperience',
        summary: 'Update experience (extension)',
        params: ExperienceParams,
        body: ExperienceUpdate,
        response: responses({ 200: Experience }),
      },
    },
    async (request) =>
      app.db.transaction().execute(async (trx) => {
        const current = await findExperience(trx, request.tenantId, request.params.experience_id);
        if (!current) throw notFound('Experience');
        return updateExperience(trx, current, request.body);
      }),
  );

  app.delete(
    '/v0/experiences/:experience_id',
    {
      schema: {
        ...experiences,
        operationId: 'deleteExperience',
        summary: 'Delete experience (extension)',
        params: ExperienceParams,
        response: responses({ 204: NoContent }),
      },
    },
    async (request, reply) => {
      await app.db.transaction().execute(async (trx) => {
        const current = await findExperience(trx, request.tenantId, request.params.experience_id);
        if (!current) throw notFound('Experience');
        await deleteExperience(trx, current);
      });
      return reply.code(204).send(null);
    },
  );
};
