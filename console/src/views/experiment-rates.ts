import { api, type Experiment, must, type Session } from '../api.js';

// The cumulative conversion rate per arm per day. The analytics endpoint groups by arm over the
// whole range only (its series has no groups), so the days are counted here, from the sessions
// list, within bounds: a browser should not read a year of visits to draw a line.
export const CHART_DAYS = 90;
export const CHART_SESSIONS = 10_000;
const PAGE = 100;

export interface ArmRates {
  key: string;
  /** Per day, in percent to one decimal: converting visits over visits so far; null before the arm's first visit. */
  values: (number | null)[];
}

export interface Rates {
  /** Each day's local midnight, as an instant. */
  times: string[];
  arms: ArmRates[];
  /** Sessions of the experiment counted. */
  counted: number;
  /** Set when CHART_SESSIONS were read before the window's start: the chart then begins at this instant. */
  cappedFrom: string | null;
}

const midnight = (at: number): Date => {
  const day = new Date(at);
  day.setHours(0, 0, 0, 0);
  return day;
};

/** The window: from the start (at most CHART_DAYS before its end) to the conclusion, or now. */
function windowOf(experiment: Experiment, startedAt: string): { start: string; end: string | undefined } {
  const end = experiment.concludedAt ?? undefined;
  const earliest = (end ? Date.parse(end) : Date.now()) - CHART_DAYS * 86_400_000;
  return { start: new Date(Math.max(Date.parse(startedAt), earliest)).toISOString(), end };
}

/** The window's sessions, newest first (the list's order), following nextCursor until CHART_SESSIONS. */
async function readSessions(pageId: string, experiment: Experiment, startedAt: string) {
  const { start, end } = windowOf(experiment, startedAt);
  const sessions: Session[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = must(
      await api.GET('/v0/pages/{page_id}/audience_sessions', {
        params: {
          path: { page_id: pageId },
          query: {
            startDate: start,
            limit: PAGE,
            ...(end ? { endDate: end } : {}),
            ...(experiment.audienceId ? { audienceId: experiment.audienceId } : {}),
            ...(cursor ? { cursor } : {}),
          },
        },
      }),
    );
    // The operation also answers text/csv; asked for JSON, a text answer is a fault.
    if (typeof page === 'string') throw new Error('The sessions came back as text, not JSON');
    sessions.push(...page.items);
    if (page.nextCursor === null) return { sessions, start, capped: false };
    if (sessions.length >= CHART_SESSIONS) return { sessions, start, capped: true };
    cursor = page.nextCursor;
  }
}

/** A visit converts as the results count it: a conversion or a form submission. */
const converted = (s: Session) => s.hasConversion || s.hasFormSubmit;

export async function loadRates(pageId: string, experiment: Experiment): Promise<Rates | null> {
  if (!experiment.startedAt) return null;
  const read = await readSessions(pageId, experiment, experiment.startedAt);
  const oldest = read.sessions.at(-1)?.sessionStartedAt;
  const from = read.capped && oldest ? oldest : read.start;
  const last = experiment.concludedAt ? Date.parse(experiment.concludedAt) : Date.now();
  const times: string[] = [];
  const dayIndex = new Map<number, number>();
  for (const day = midnight(Date.parse(from)); day.getTime() <= last; day.setDate(day.getDate() + 1)) {
    dayIndex.set(day.getTime(), times.length);
    times.push(day.toISOString());
  }
  const counts = new Map(experiment.arms.map((a) => [a.key, times.map(() => ({ visits: 0, conversions: 0 }))]));
  let counted = 0;
  for (const s of read.sessions) {
    const days = s.experimentId === experiment.experimentId && s.arm !== null ? counts.get(s.arm) : undefined;
    const day = days?.[dayIndex.get(midnight(Date.parse(s.sessionStartedAt)).getTime()) ?? -1];
    if (!day) continue;
    day.visits += 1;
    if (converted(s)) day.conversions += 1;
    counted += 1;
  }
  const arms = [...counts].map(([key, days]) => {
    let visits = 0;
    let conversions = 0;
    const values = days.map((d) => {
      visits += d.visits;
      conversions += d.conversions;
      return visits === 0 ? null : Math.round((conversions / visits) * 1000) / 10;
    });
    return { key, values };
  });
  return { times, arms, counted, cappedFrom: read.capped ? from : null };
}
