import { useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import { Section, Status, useLoad } from '../components.js';
import { plural } from '../words.js';
import { type ExperienceAnalytics, experienceAnalytics } from './onsite-api.js';

// An experience's results (issue 48, §4): views, visitors, clicks and conversions over a range, the
// arms side by side, and with a holdout the experiments' anytime-valid decision, p-value and lift.

const RANGES = [
  { days: 7, label: 'Last 7 days' },
  { days: 30, label: 'Last 30 days' },
  { days: 90, label: 'Last 90 days' },
  { days: 365, label: 'Last 365 days' },
];
const DAY_MS = 86_400_000;
const DECISIONS: Record<string, string> = {
  collecting: 'Collecting: not enough difference yet',
  winner: 'A winner',
  no_difference: 'No difference',
};
const ARMS: Record<string, string> = { personalised: 'Personalised', holdout: 'Holdout (unchanged)' };

const percent = (x: number | null | undefined) => (x === null || x === undefined ? '—' : `${(x * 100).toFixed(1)}%`);
const signed = (x: number) => `${x >= 0 ? '+' : ''}${percent(x)}`;
const pValueText = (p: number | null | undefined) => (p === null || p === undefined ? '—' : p < 0.001 ? '< 0.001' : p.toFixed(3));
function liftText(lift: ExperienceAnalytics['lift']): string {
  if (lift === null || lift === undefined) return '—';
  if (typeof lift === 'number') return signed(lift);
  return `${signed(lift.estimate)} (${signed(lift.low)} to ${signed(lift.high)})`;
}

/** Results not there yet (the endpoint is missing: 404) are said as such, not as a failure. */
type Loaded = { analytics: ExperienceAnalytics } | { missing: string };

export function ExperienceResults({ experienceId, holdoutPercent }: { experienceId: string; holdoutPercent: number }) {
  const [days, setDays] = useState(30);
  const loaded = useLoad(async (): Promise<Loaded> => {
    // Whole days, to the end of today: the counts are kept per day.
    const end = new Date(Math.ceil(Date.now() / DAY_MS) * DAY_MS);
    const query = { startDate: new Date(end.getTime() - days * DAY_MS).toISOString(), endDate: end.toISOString() };
    try {
      return { analytics: await experienceAnalytics(experienceId, query) };
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return { missing: err.message };
      throw err;
    }
  }, [experienceId, days]);
  const data = loaded.data;
  return (
    <Section title="Results">
      <form class="controls" onSubmit={(e) => e.preventDefault()}>
        <label>
          Range{' '}
          <select value={String(days)} onChange={(e) => setDays(Number(e.currentTarget.value))} name="range">
            {RANGES.map((r) => (
              <option key={r.days} value={String(r.days)}>
                {r.label}
              </option>
            ))}
          </select>
        </label>
      </form>
      <Status loaded={loaded}>
        {data && 'missing' in data && (
          <p class="muted" data-results="missing">
            No results to show: this service does not measure experiences yet ({data.missing}).
          </p>
        )}
        {data && 'analytics' in data && <Numbers analytics={data.analytics} holdoutPercent={holdoutPercent} />}
      </Status>
    </Section>
  );
}

function Numbers({ analytics, holdoutPercent }: { analytics: ExperienceAnalytics; holdoutPercent: number }) {
  const t = analytics.totals;
  return (
    <>
      <dl class="kpis" data-results="">
        <div data-kpi="views">
          <dt>Views</dt>
          <dd>
            <strong>{t.views.toLocaleString('en')}</strong> <span class="muted small">by {plural('visitor', t.visitors)}</span>
          </dd>
        </div>
        <div data-kpi="clicks">
          <dt>Clicks on changed elements</dt>
          <dd>
            <strong>{t.clicks.toLocaleString('en')}</strong>
          </dd>
        </div>
        <div data-kpi="conversions">
          <dt>Conversions</dt>
          <dd>
            <strong>{t.conversions.toLocaleString('en')}</strong>
          </dd>
        </div>
      </dl>
      {analytics.decision !== undefined && (
        <dl class="totals" data-holdout="">
          <div>
            <dt>Decision</dt>
            <dd data-decision={analytics.decision}>
              {DECISIONS[analytics.decision] ?? analytics.decision}
              {analytics.winner ? `: ${ARMS[analytics.winner] ?? analytics.winner}` : ''}
            </dd>
          </div>
          <div>
            <dt>p-value</dt>
            <dd>{pValueText(analytics.pValue)}</dd>
          </div>
          <div>
            <dt>Lift over the holdout</dt>
            <dd>{liftText(analytics.lift)}</dd>
          </div>
        </dl>
      )}
      {analytics.decision === undefined && holdoutPercent === 0 && (
        <p class="muted small">No holdout: set one to measure what the changes make happen.</p>
      )}
      <table>
        <caption>By arm: personalised visitors against those held out</caption>
        <thead>
          <tr>
            {['Arm', 'Views', 'Visitors', 'Conversions', 'Conversion rate'].map((name) => (
              <th scope="col" key={name}>
                {name}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {analytics.arms.length === 0 && (
            <tr>
              <td colSpan={5} class="muted">
                No views in this range
              </td>
            </tr>
          )}
          {analytics.arms.map((a) => (
            <tr key={a.arm} data-arm={a.arm}>
              <th scope="row">{ARMS[a.arm] ?? a.arm}</th>
              <td class="num">{a.views}</td>
              <td class="num">{a.visitors}</td>
              <td class="num">{a.conversions}</td>
              <td class="num">{percent(a.conversionRate)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
