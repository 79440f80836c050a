import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import { findAudience, findPageVersion } from '../audiences/index.js';
import { notFound } from '../http/errors.js';
import { MAX_SAFE_INTEGER, responses, StringEnum } from '../http/schemas.js';
import { pageContent, livePage, PageParams, type Content, layoutOf } from '../pages/index.js';
import { type MapCounts, VIEWPORTS, visitReads } from '../visits/index.js';
import { DAY_MS, resolveRange } from './ranges.js';

// `GET /v0/pages/{page_id}/heatmap` (issue 49): where a page's visitors click, rage-click and how far they scroll, per section.

export const HEATMAP_TYPES = ['click', 'rage', 'scroll'] as const;
const Count = Type.Integer({ minimum: 0, maximum: MAX_SAFE_INTEGER });
const DateTime = (description: string) => Type.String({ format: 'date-time', description });

export const HeatmapQuery = Type.Object(
  {
    type: Type.Optional(
      StringEnum(HEATMAP_TYPES, {
        default: 'click',
        description:
          'click: clicks per cell; rage: rage clicks per cell (3 or more within 1 s and 30 px, counted once); scroll: clicks, and `scroll`',
      }),
    ),
    audienceId: Type.Optional(Type.String({ description: 'Only this audience of the page' })),
    versionId: Type.Optional(Type.String({ description: "Only visits served this version (of any of the page's audiences)" })),
    viewport: Type.Optional(StringEnum(VIEWPORTS, { description: 'mobile: under 768 px wide; tablet: under 1,024; desktop' })),
    startDate: Type.Optional(DateTime('From the UTC day of this instant; default: 30 days before endDate')),
    endDate: Type.Optional(DateTime('Through the UTC day of the last instant before this one; default: the next UTC midnight')),
  },
  { additionalProperties: false },
);
export type HeatmapQuery = Static<typeof HeatmapQuery>;

export const Heatmap = Type.Object(
  {
    visits: Type.Integer({ minimum: 0, maximum: MAX_SAFE_INTEGER, description: 'Measured visits in the range (that reported a viewport)' }),
    sections: Type.Array(
      Type.Object({
        index: Type.Integer({ minimum: 0, description: "0-based, in the content's order (the headline is not a section)" }),
        layout: Type.String(),
        heading: Type.String(),
        reached: Type.Integer({ minimum: 0, maximum: MAX_SAFE_INTEGER, description: 'Visits that saw at least half of the section' }),
        clicks: Type.Integer({ minimum: 0, maximum: MAX_SAFE_INTEGER, description: "The cells' sum (rage clicks for type=rage)" }),
        cells: Type.Array(
          Type.Object({ x: Type.Integer({ minimum: 0, maximum: 19 }), y: Type.Integer({ minimum: 0, maximum: 19 }), clicks: Count }),
          {
            description: 'The cells of a 20 × 20 grid over the section with a click, by row then column',
          },
        ),
      }),
      { description: "The sections of the version's content (else the page's), in order" },
    ),
    scroll: Type.Optional(
      Type.Array(Type.Object({ depth: Type.Integer({ minimum: 0, maximum: 100 }), visits: Count }), {
        description: 'type=scroll: for each depth 0 to 100 in steps of 5, the visits that scrolled at least that far',
      }),
    ),
  },
  { $id: 'Heatmap' },
);
export type Heatmap = Static<typeof Heatmap>;

/** The UTC day of an instant in milliseconds, YYYY-MM-DD. */
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The answer from the rollups' counts and the content whose sections they name. */
export function heatmapOf(type: HeatmapQuery['type'], counts: MapCounts, content: Content): Heatmap {
  const visits = [...counts.depths.values()].reduce((sum, n) => sum + n, 0);
  const sections = content.sections.map((section, index) => {
    const cells = counts.cells
      .filter((c) => c.section === index)
      .map((c) => ({ x: c.x, y: c.y, clicks: type === 'rage' ? c.rages : c.clicks }))
      .filter((c) => c.clicks > 0);
    return {
      index,
      layout: layoutOf(section),
      heading: section.heading,
      reached: counts.reached.get(index) ?? 0,
      clicks: cells.reduce((sum, c) => sum + c.clicks, 0),
      cells,
    };
  });
  if (type !== 'scroll') return { visits, sections };
  const scroll = [];
  for (let depth = 0; depth <= 100; depth += 5) {
    let n = 0;
    for (const [d, v] of counts.depths) if (d >= depth) n += v;
    scroll.push({ depth, visits: n });
  }
  return { visits, sections, scroll };
}

export const heatmapRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/v0/pages/:page_id/heatmap',
    {
      schema: {
        tags: ['analytics'],
        'x-extension': true,
        operationId: 'getPageHeatmap',
        summary: "Where a page's visitors click and how far they scroll, per section (extension)",
        description: 'Kept per UTC day: the range covers whole UTC days. Definitions: docs/analytics.md, "Click and scroll maps".',
        params: PageParams,
        querystring: HeatmapQuery,
        response: responses({ 200: Heatmap }),
      },
    },
    async (request) => {
      const { query } = request;
      const page = await livePage(app.db, request.tenantId, request.params.page_id);
      if (query.audienceId !== undefined && !(await findAudience(app.db, request.tenantId, page.id, query.audienceId))) {
        throw notFound('Audience');
      }
      const version = query.versionId === undefined ? undefined : await findPageVersion(app.db, request.tenantId, page.id, query.versionId);
      if (query.versionId !== undefined && !version) throw notFound('Version');
      const span = resolveRange(query, Math.ceil(Date.now() / DAY_MS) * DAY_MS, 'UTC');
      const content = version?.content ? (JSON.parse(version.content) as Content) : pageContent(page);
      const counts =
        span.end > span.start
          ? await visitReads(app.db).mapCounts({
              tenantId: page.tenant_id,
              pageId: page.id,
              audienceId: query.audienceId,
              versionId: query.versionId,
              viewport: query.viewport,
              fromDay: dayOf(span.start),
              toDay: dayOf(span.end - 1),
            })
          : { depths: new Map(), reached: new Map(), cells: [] };
      return heatmapOf(query.type ?? 'click', counts, content);
    },
  );
};
