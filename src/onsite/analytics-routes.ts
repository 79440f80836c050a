import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../http/errors.js';
import { responses } from '../http/schemas.js';
import { experienceAnalytics } from './measure/analytics.js';
import { reportDoor } from './measure/door.js';
import { measuredExperience } from './measure/lookups.js';
import { ExperienceAnalytics, ExperienceAnalyticsQuery, ExperienceParams } from './measure/schemas.js';

/**
 * Issue 48 §4, one plugin listed in app.ts: the site script's report door (`POST /_pam/x`, its own
 * encapsulated plugin: no API key, its own parsers and answers) and an experience's analytics.
 */
export const onsiteMeasureRoutes: FastifyPluginAsyncTypebox<{ secret: string }> = async (app, { secret }) => {
  await app.register(reportDoor, { secret, config: app.config });

  app.get(
    '/v0/experiences/:experience_id/analytics',
    {
      schema: {
        tags: ['experiences'],
        'x-extension': true,
        operationId: 'getExperienceAnalytics',
        summary: "An experience's views, visitors, clicks and conversions per arm, with the holdout's comparison",
        description: 'Counted by UTC day; how each number is counted: docs/analytics.md ("Experiences on your own site").',
        params: ExperienceParams,
        querystring: ExperienceAnalyticsQuery,
        response: responses({ 200: ExperienceAnalytics }),
      },
    },
    async (request) => {
      const experience = await measuredExperience(app.db, request.tenantId, request.params.experience_id);
      if (!experience) throw notFound('Experience');
      return experienceAnalytics(app.db, experience, request.query);
    },
  );
};
