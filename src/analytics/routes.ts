import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { findAudience } from '../audiences/index.js';
import { notFound } from '../http/errors.js';
import { ListEnvelope, responses } from '../http/schemas.js';
import { livePage, PageParams } from '../pages/index.js';
import { goalMetrics } from './goals.js';
import { scrollAndVitals } from './vitals.js';
import { listPagesAnalytics } from './overview.js';
import { realtime } from './realtime.js';
import { getPageAnalytics, getSiteAnalytics } from './repository.js';
import {
  PageAnalytics,
  PageAnalyticsQuery,
  PagesAnalyticsQuery,
  PageTotals,
  Realtime,
  SiteAnalytics,
  SiteAnalyticsQuery,
} from './schemas.js';

const extension = { tags: ['analytics'], 'x-extension': true };

/** One plugin, listed in app.ts; the route rules (API key, query parameters, dispatcher wake-ups) are in src/http/route-rules.ts. */
export const analyticsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/v0/pages/:page_id/analytics',
    {
      schema: {
        ...extension,
        operationId: 'getPageAnalytics',
        summary: "A page's visits aggregated over time, in a time zone (extension)",
        description: 'Metric definitions, bounds and defaults: docs/analytics.md.',
        params: PageParams,
        querystring: PageAnalyticsQuery,
        response: responses({ 200: PageAnalytics }),
      },
    },
    async (request) => {
      const page = await livePage(app.db, request.tenantId, request.params.page_id);
      if (request.query.audienceId !== undefined && !(await findAudience(app.db, request.tenantId, page.id, request.query.audienceId))) {
        throw notFound('Audience');
      }
      const answer = await getPageAnalytics(app.db, page, request.query);
      const scope = {
        tenantId: page.tenant_id,
        pageIds: [page.id],
        audienceId: request.query.audienceId,
        start: answer.startDate,
        end: answer.endDate,
      };
      return {
        ...answer,
        goals: await goalMetrics(app.db, scope, answer.totals.visits),
        ...(await scrollAndVitals(app.db, page.tenant_id, page.id, answer)),
      };
    },
  );

  app.get(
    '/v0/analytics/pages',
    {
      schema: {
        ...extension,
        operationId: 'listPagesAnalytics',
        summary: 'Totals per page over a range, most visited or converting first (extension)',
        description: 'Pages with at least one visit in the range; metric definitions in docs/analytics.md.',
        querystring: PagesAnalyticsQuery,
        response: responses({ 200: ListEnvelope(PageTotals, { totalCount: 'The live pages with visits in the range' }) }),
      },
    },
    async (request) => listPagesAnalytics(app.db, request.tenantId, request.query),
  );

  app.get(
    '/v0/analytics/site',
    {
      schema: {
        ...extension,
        operationId: 'getSiteAnalytics',
        summary: "Every live page's visits together, aggregated over time, in a time zone (extension)",
        description: "The same answer as a page's analytics, over all pages of the tenant; definitions in docs/analytics.md.",
        querystring: SiteAnalyticsQuery,
        response: responses({ 200: SiteAnalytics }),
      },
    },
    async (request) => {
      const answer = await getSiteAnalytics(app.db, request.tenantId, request.query);
      const scope = { tenantId: request.tenantId, start: answer.startDate, end: answer.endDate };
      return {
        ...answer,
        goals: await goalMetrics(app.db, scope, answer.totals.visits),
        ...(await scrollAndVitals(app.db, request.tenantId, undefined, answer)),
      };
    },
  );

  app.get(
    '/v0/analytics/realtime',
    {
      schema: {
        ...extension,
        operationId: 'getRealtimeAnalytics',
        summary: 'The visits active in the last five minutes (extension)',
        description:
          'A visit is active from its first report until its session.ended falls due, while it reported in the last five minutes.',
        response: responses({ 200: Realtime }),
      },
    },
    async (request) => realtime(app.db, request.tenantId, app.config.sessionIdleSeconds),
  );
};
