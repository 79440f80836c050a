import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { responses } from '../http/schemas.js';
import { getSiteSettings, updateSiteSettings } from './repository.js';
import { SiteSettings, SiteSettingsUpdate } from './schemas.js';

const tags = ['site settings'];

/** One plugin, listed in app.ts; the route rules (API key, query parameters, dispatcher wake-ups) are in src/http/route-rules.ts. */
export const siteSettingsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/v0/site_settings',
    {
      schema: {
        tags,
        'x-extension': true,
        operationId: 'getSiteSettings',
        summary: "Get the tenant's site settings (extension)",
        description: 'The brand every served page wears; a tenant that never changed them reads the defaults, with `updatedAt` null.',
        response: responses({ 200: SiteSettings }),
      },
    },
    async (request) => getSiteSettings(app.db, request.tenantId),
  );

  app.patch(
    '/v0/site_settings',
    {
      schema: {
        tags,
        'x-extension': true,
        operationId: 'updateSiteSettings',
        summary: "Update the tenant's site settings (extension)",
        description:
          'Colours are checked for WCAG AA contrast (4.5:1) between textColor and backgroundColor, and between the button text (white) and brandColor: 400 naming the field below it. The next request to any served page shows the change.',
        body: SiteSettingsUpdate,
        response: responses({ 200: SiteSettings }),
      },
    },
    async (request) => app.db.transaction().execute((trx) => updateSiteSettings(trx, request.tenantId, request.body)),
  );
};
