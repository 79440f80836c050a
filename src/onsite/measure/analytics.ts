import type { Kysely } from 'kysely';
import { DAY_MS, resolveRange } from '../../analytics/index.js';
import type { Database } from '../../db/types.js';
import { analyse, type PeriodCounts } from '../../experiments/index.js';
import type { ExperienceAnalytics, ExperienceAnalyticsQuery } from './schemas.js';

/** As an experiment's default: the decision stays `collecting` until each arm has this many visitors. */
export const MINIMUM_UNITS_PER_ARM = 100;

/** What the analytics need of an experience. */
export interface MeasuredExperience {
  experienceId: string;
  tenantId: string;
  holdoutPercent: number;
}

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * An experience's views, visitors, clicks and conversions over the UTC days the range touches
 * (the rollup is by day), per arm; with a holdout, the experiments' analysis (src/experiments/statistics.ts)
 * of the personalised arm against the holdout as baseline, each day a period (so a change of
 * holdoutPercent cannot tilt the comparison), its units the day's distinct visitors.
 */
export async function experienceAnalytics(
  db: Kysely<Database>,
  experience: MeasuredExperience,
  query: ExperienceAnalyticsQuery,
): Promise<ExperienceAnalytics> {
  const nextMidnight = Math.floor(Date.now() / DAY_MS) * DAY_MS + DAY_MS;
  const range = resolveRange(query, nextMidnight, 'UTC');
  const first = dayOf(Math.floor(range.start / DAY_MS) * DAY_MS);
  const after = dayOf(Math.ceil(range.end / DAY_MS) * DAY_MS);
  const rows =
    range.end > range.start
      ? await db
          .selectFrom('experience_days')
          .select(['arm', 'day', 'views', 'visitors', 'clicks', 'conversions'])
          .where('experience_id', '=', experience.experienceId)
          .where('tenant_id', '=', experience.tenantId)
          .where('day', '>=', first)
          .where('day', '<', after)
          .orderBy('day')
          .execute()
      : [];
  const totals = { views: 0, visitors: 0, clicks: 0, conversions: 0 };
  const arms = new Map<string, { views: number; visitors: number; conversions: number }>();
  const days = new Map<string, PeriodCounts['arms']>();
  for (const r of rows) {
    const views = Number(r.views);
    const visitors = Number(r.visitors);
    const conversions = Number(r.conversions);
    totals.views += views;
    totals.visitors += visitors;
    totals.clicks += Number(r.clicks);
    totals.conversions += conversions;
    const arm = arms.get(r.arm) ?? { views: 0, visitors: 0, conversions: 0 };
    arms.set(r.arm, { views: arm.views + views, visitors: arm.visitors + visitors, conversions: arm.conversions + conversions });
    const day = days.get(r.day) ?? {};
    day[r.arm] = { units: visitors, visits: views, conversions: Math.min(conversions, visitors) };
    days.set(r.day, day);
  }
  const held = experience.holdoutPercent > 0;
  const keys = held ? (['personalised', 'holdout'] as const) : (['personalised'] as const);
  const answer: ExperienceAnalytics = {
    experienceId: experience.experienceId,
    startDate: new Date(range.start).toISOString(),
    endDate: new Date(range.end).toISOString(),
    totals,
    arms: keys.map((arm) => {
      const a = arms.get(arm) ?? { views: 0, visitors: 0, conversions: 0 };
      return { arm, ...a, conversionRate: a.visitors > 0 ? a.conversions / a.visitors : 0 };
    }),
  };
  if (!held) return answer;
  const weights = { holdout: experience.holdoutPercent, personalised: 100 - experience.holdoutPercent };
  const analysis = analyse({
    arms: [
      { key: 'holdout', weight: weights.holdout },
      { key: 'personalised', weight: weights.personalised },
    ],
    periods: [...days.values()].map((arms) => ({ weights, arms })),
    minimumUnitsPerArm: MINIMUM_UNITS_PER_ARM,
  });
  const personalised = analysis.arms[1];
  return {
    ...answer,
    decision: analysis.decision,
    winner: analysis.winner,
    pValue: personalised?.pValue ?? null,
    lift: personalised?.lift ?? null,
  };
}
