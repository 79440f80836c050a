import { createOnce, fromHeader, IdempotencyHeaders, sendOnce } from '../http/idempotency.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';

import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { conflict, notFound } from '../http/errors.js';
import type { PublicOrigin } from '../http/public-origin.js';
import { EmptyBody, ListEnvelope, responses } from '../http/schemas.js';
import { livePage, PageParams } from '../pages/index.js';
import { archiveAudience, restoreAudience } from './archiving.js';
import { createAudience, findAudience, getAudience, listAudiences, updateAudience } from './repository.js';
import { searchAudiences } from './search.js';
import { moveVersion } from './publishing.js';
import { toVersion } from './version-row.js';
import { createVersion, findVersion, listVersions, restoreVersion, updateVersion } from './versions.js';
import {
  Audience,
  AudienceCreate,
  AudienceListQuery,
  AudienceSearchPage,
  AudienceSearchQuery,
  AudienceUpdate,
  AudienceVersion,
  PageAudienceParams,
  VersionCreate,
  VersionListQuery,
  VersionParams,
  VersionUpdate,
} from './schemas.js';

const tags = ['audiences'];
const extension = { tags, 'x-extension': true };

/** Every path under a page answers 404 once the page is gone (or was never the caller's). */
async function audienceOf(db: Kysely<Database>, tenantId: string, pageId: string, audienceId: string) {
  const page = await livePage(db, tenantId, pageId);
  const audience = await findAudience(db, tenantId, page.id, audienceId);
  if (!audience) throw notFound('Audience');
  return { page, audience };
}

async function versionOf(db: Kysely<Database>, tenantId: string, params: { page_id: string; audience_id: string; version_id: string }) {
  const { audience } = await audienceOf(db, tenantId, params.page_id, params.audience_id);
  const version = await findVersion(db, audience, params.version_id);
  if (!version) throw notFound('Audience version');
  return { audience, version };
}

/** One plugin, listed in app.ts; the route rules (API key, query parameters, dispatcher wake-ups) are in src/http/route-rules.ts. */
export const audienceRoutes: FastifyPluginAsyncTypebox<{ origin: PublicOrigin }> = async (app, { origin }) => {
  app.get(
    '/v0/pages/:page_id/audiences',
    {
      schema: {
        tags,
        operationId: 'listAudiences',
        summary: 'List audiences of a page',
        params: PageParams,
        querystring: AudienceListQuery,
        response: responses({ 200: ListEnvelope(Audience) }),
      },
    },
    async (request) => listAudiences(app.db, await livePage(app.db, request.tenantId, request.params.page_id), request.query),
  );

  app.post(
    '/v0/pages/:page_id/audiences',
    {
      schema: {
        headers: IdempotencyHeaders,
        ...extension,
        operationId: 'createAudience',
        summary: 'Create audience (extension)',
        params: PageParams,
        body: AudienceCreate,
        response: responses({ 201: Audience }),
      },
    },
    async (request, reply) => {
      const result = await createOnce(app.db, fromHeader(request), async (trx) =>
        createAudience(trx, await livePage(trx, request.tenantId, request.params.page_id), request.body, (hostname) =>
          origin(hostname, request.raw),
        ),
      );
      return sendOnce(reply, result);
    },
  );

  app.get(
    '/v0/pages/:page_id/audiences/:audience_id',
    {
      schema: {
        tags,
        operationId: 'getAudience',
        summary: 'Get audience',
        params: PageAudienceParams,
        response: responses({ 200: Audience }),
      },
    },
    async (request) => {
      const page = await livePage(app.db, request.tenantId, request.params.page_id);
      const audience = await getAudience(app.db, page, request.params.audience_id);
      if (!audience) throw notFound('Audience');
      return audience;
    },
  );

  app.patch(
    '/v0/pages/:page_id/audiences/:audience_id',
    {
      schema: {
        ...extension,
        operationId: 'updateAudience',
        summary: 'Update audience (extension)',
        params: PageAudienceParams,
        body: AudienceUpdate,
        response: responses({ 200: Audience }),
      },
    },
    async (request) =>
      app.db.transaction().execute(async (trx) => {
        const { page, audience } = await audienceOf(trx, request.tenantId, request.params.page_id, request.params.audience_id);
        return updateAudience(trx, page, audience, request.body, (hostname) => origin(hostname, request.raw));
      }),
  );

  for (const [action, apply, summary] of [
    ['archive', archiveAudience, 'Archive audience: it leaves lists, search and its route key (extension)'],
    ['restore', restoreAudience, 'Restore an archived audience (extension)'],
  ] as const) {
    app.post(
      `/v0/pages/:page_id/audiences/:audience_id/${action}`,
      {
        schema: {
          headers: IdempotencyHeaders,
          ...extension,
          operationId: `${action}Audience`,
          summary,
          params: PageAudienceParams,
          body: EmptyBody,
          response: responses({ 200: Audience }),
        },
      },
      async (request, reply) => {
        const result = await createOnce(app.db, fromHeader(request, 200), async (trx) => {
          const { page, audience } = await audienceOf(trx, request.tenantId, request.params.page_id, request.params.audience_id);
          return apply(trx, page, audience);
        });
        return sendOnce(reply, result);
      },
    );
  }

  app.post(
    '/v0/pages/:page_id/audiences/:audience_id/versions',
    {
      schema: {
        headers: IdempotencyHeaders,
        ...extension,
        operationId: 'createAudienceVersion',
        summary: 'Create a draft audience version (extension)',
        params: PageAudienceParams,
        body: VersionCreate,
        response: responses({ 201: AudienceVersion }),
      },
    },
    async (request, reply) => {
      const result = await createOnce(app.db, fromHeader(request), async (trx) => {
        const { audience } = await audienceOf(trx, request.tenantId, request.params.page_id, request.params.audience_id);
        return createVersion(trx, audience, request.body);
      });
      return sendOnce(reply, result);
    },
  );

  app.get(
    '/v0/pages/:page_id/audiences/:audience_id/versions',
    {
      schema: {
        ...extension,
        operationId: 'listAudienceVersions',
        summary: "List an audience's versions, newest first (extension)",
        params: PageAudienceParams,
        querystring: VersionListQuery,
        response: responses({ 200: ListEnvelope(AudienceVersion) }),
      },
    },
    async (request) => {
      const { audience } = await audienceOf(app.db, request.tenantId, request.params.page_id, request.params.audience_id);
      return listVersions(app.db, audience, request.query);
    },
  );

  app.get(
    '/v0/pages/:page_id/audiences/:audience_id/versions/:version_id',
    {
      schema: {
        tags,
        operationId: 'getAudienceVersion',
        summary: 'Get audience version',
        params: VersionParams,
        response: responses({ 200: AudienceVersion }),
      },
    },
    async (request) => toVersion((await versionOf(app.db, request.tenantId, request.params)).version),
  );

  app.patch(
    '/v0/pages/:page_id/audiences/:audience_id/versions/:version_id',
    {
      schema: {
        ...extension,
        operationId: 'updateAudienceVersion',
        summary: "Move an audience version forward, or change a draft's content (extension)",
        params: VersionParams,
        body: VersionUpdate,
        response: responses({ 200: AudienceVersion }),
      },
    },
    async (request) =>
      app.db.transaction().execute(async (trx) => {
        const { audience, version } = await versionOf(trx, request.tenantId, request.params);
        return updateVersion(trx, audience, version, request.body);
      }),
  );

  app.post(
    '/v0/pages/:page_id/audiences/:audience_id/versions/:version_id/cancel',
    {
      schema: {
        headers: IdempotencyHeaders,
        tags,
        operationId: 'cancelAudienceVersion',
        summary: 'Cancel audience version',
        params: VersionParams,
        body: EmptyBody,
        response: responses({ 200: AudienceVersion }),
      },
    },
    async (request, reply) => {
      const result = await createOnce(app.db, fromHeader(request, 200), async (trx) => {
        const { audience, version } = await versionOf(trx, request.tenantId, request.params);
        if (version.status === 'published' || version.status === 'archived') {
          throw conflict(`The version is ${version.status}; only a draft, pending, queued or processing version can be cancelled`);
        }
        return moveVersion(trx, audience, version, 'cancelled');
      });
      return sendOnce(reply, result);
    },
  );

  app.post(
    '/v0/pages/:page_id/audiences/:audience_id/versions/:version_id/restore',
    {
      schema: {
        headers: IdempotencyHeaders,
        ...extension,
        operationId: 'restoreAudienceVersion',
        summary:
          "Publish a new version with this version's content, origin written; the one published before is archived (extension). 409 nothing_to_restore for a version with no content",
        params: VersionParams,
        body: EmptyBody,
        response: responses({ 201: AudienceVersion }),
      },
    },
    async (request, reply) => {
      const result = await createOnce(app.db, fromHeader(request), async (trx) => {
        const { audience, version } = await versionOf(trx, request.tenantId, request.params);
        return restoreVersion(trx, audience, version);
      });
      return sendOnce(reply, result);
    },
  );

  app.get(
    '/v0/audiences/search',
    {
      schema: {
        tags,
        operationId: 'searchAudiences',
        summary: 'Search audiences',
        querystring: AudienceSearchQuery,
        response: responses({ 200: AudienceSearchPage }),
      },
    },
    async (request) => searchAudiences(app.db, request.tenantId, request.query),
  );
};
