import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { notFound } from '../../http/errors.js';
import { createOnce, fromHeader, IdempotencyHeaders, sendOnce } from '../../http/idempotency.js';
import { responses } from '../../http/schemas.js';
import { PreviewVisit } from '../../pages/index.js';
import { findExperience } from '../experiences-repository.js';
import { findSite } from '../sites-repository.js';
import { createToolToken } from './tool-tokens.js';

const tags = { tags: ['sites'], 'x-extension': true };

const ToolToken = Type.Object(
  {
    token: Type.String({ description: 'One-time: the first browser that opens the page with it holds it until it expires' }),
    expiresAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'OnsiteToolToken' },
);
const SiteParams = Type.Object({ site_id: Type.String() });
const ExperienceParams = Type.Object({ experience_id: Type.String() });
const PreviewBody = Type.Object(
  {
    utm: Type.Optional(PreviewVisit.properties.utm),
    company: Type.Optional(PreviewVisit.properties.company),
  },
  {
    additionalProperties: false,
    $id: 'PreviewTokenCreate',
    description: 'The visit the preview shows: its UTM values and company ({{utm.*}}, {{company.*}})',
  },
);

/**
 * The console's tokens for the site script (issue 48 §5): a pick token opens a site's page with
 * the element picker (`?pam_pick=`), a preview token forces one experience's changes for the
 * browser that opens it (`?pam_preview=`), with the UTM values and company chosen.
 */
export const toolRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/v0/sites/:site_id/pick-tokens',
    {
      schema: {
        ...tags,
        operationId: 'createPickToken',
        summary: 'Create a pick token (extension)',
        description:
          "Open `<site origin><path>?pam_pick=<token>` from the console: the site's script outlines the element under the pointer, and a click posts `{type: 'pam:pick', token, selector}` to the console's origin. Ten minutes, one browser.",
        headers: IdempotencyHeaders,
        params: SiteParams,
        response: responses({ 201: ToolToken }),
      },
    },
    async (request, reply) => {
      const site = await findSite(app.db, request.tenantId, request.params.site_id);
      if (!site) throw notFound('Site');
      return sendOnce(
        reply,
        await createOnce(app.db, fromHeader(request), (trx) =>
          createToolToken(trx, { tenantId: request.tenantId, siteId: site.id, kind: 'pick' }),
        ),
      );
    },
  );

  app.post(
    '/v0/experiences/:experience_id/preview-tokens',
    {
      schema: {
        ...tags,
        operationId: 'createPreviewToken',
        summary: 'Create a preview token (extension)',
        description:
          "Open a page of the experience's site with `?pam_preview=<token>`: the script applies this experience's changes (whatever its status, rules and holdout), its tokens filled from the visit described here, and nothing is measured. An hour, one browser.",
        headers: IdempotencyHeaders,
        params: ExperienceParams,
        body: PreviewBody,
        response: responses({ 201: ToolToken }),
      },
    },
    async (request, reply) => {
      const found = await findExperience(app.db, request.tenantId, request.params.experience_id);
      if (!found) throw notFound('Experience');
      return sendOnce(
        reply,
        await createOnce(app.db, fromHeader(request), (trx) =>
          createToolToken(trx, {
            tenantId: request.tenantId,
            siteId: found.site_id,
            kind: 'preview',
            experienceId: found.id,
            visit: request.body,
          }),
        ),
      );
    },
  );
};
