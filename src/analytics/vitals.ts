import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { summarize, VITALS, visitReads } from '../visits/index.js';
import type { Metrics, WebVitals } from './schemas.js';

const dayOf = (iso: string) => new Date(Date.parse(iso)).toISOString().slice(0, 10);

/**
 * What an analytics answer adds for issue 49: `averageScrollDepth` (the mean of each visit's deepest
 * scroll, the same sums as the totals) and the web vitals of the UTC days the range touches.
 */
export async function scrollAndVitals(
  db: Kysely<Database>,
  tenantId: string,
  pageId: string | undefined,
  answer: { startDate: string; endDate: string; totals: Metrics },
): Promise<{ averageScrollDepth: number | null; webVitals: WebVitals }> {
  const start = Date.parse(answer.startDate);
  const end = Date.parse(answer.endDate);
  const buckets =
    end > start
      ? await visitReads(db).vitals({ tenantId, pageId, fromDay: dayOf(answer.startDate), toDay: dayOf(new Date(end - 1).toISOString()) })
      : new Map();
  const webVitals = Object.fromEntries(VITALS.map((m) => [m, summarize(m, buckets.get(m) ?? new Map())])) as WebVitals;
  return { averageScrollDepth: answer.totals.avgMaxScrollDepthPercentage, webVitals };
}
