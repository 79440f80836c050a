import { useEffect, useState } from 'preact/hooks';
import { api, type components, must } from '../api.js';
import { type Line, TimeChart } from '../chart.js';
import { Section, Status, useLoad } from '../components.js';
import { href } from '../router.js';
import { PipelinePanel } from './pipeline.js';
import { plural } from '../words.js';

// The site dashboard (issue 28): the tenant's visits over every page against the previous period,
// a chart, the top pages, channels, referrers, countries and devices, goals with their value,
// funnels as bars, and who is on a page right now (every 10 s).

type GoalMetrics = components['schemas']['GoalMetrics'];
type FunnelResults = components['schemas']['FunnelResults'];
type Funnel = components['schemas']['Funnel'];

/**
 * The site answer as issue 28 describes it (`GET /v0/analytics/site`): a page's analytics over all
 * pages, with `visitors`, `previous.totals` and `change` under `compare=previous_period`.
 */
interface SiteMetrics {
  visitors?: number;
  visits: number;
  conversions: number;
  conversionRate: number | null;
  avgTimeSpentSeconds: number | null;
}
interface SiteAnalytics {
  totals: SiteMetrics;
  series: (SiteMetrics & { start: string })[];
  groups?: (SiteMetrics & { key: string; label: string })[];
  previous?: { totals: SiteMetrics };
  change?: Partial<Record<keyof SiteMetrics, number | null>>;
  goals?: GoalMetrics[];
}
/** `GET /v0/analytics/realtime`: the visits active in the last 5 minutes. */
interface Realtime {
  count: number;
  visits?: {
    pageId?: string;
    pageName?: string;
    audienceId?: string;
    /** The audience shown (issue 39): for a segment, the one the visit matched by its rules. */
    audienceName?: string;
    audienceKind?: 'segment' | 'person' | 'home' | 'other';
    personName?: string | null;
    accountName?: string | null;
    path?: string;
    channel?: string;
    country?: string;
  }[];
}

// The site and realtime endpoints come with issue 28's collector work: read through the SDK's
// client by path, with the shapes, until its generated types name them.
type LooseGet = (
  path: string,
  init: { params: { query: Record<string, string> } },
) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
const get = api.GET as unknown as LooseGet;
const site = async (query: Record<string, string>) => must(await get('/v0/analytics/site', { params: { query } })) as SiteAnalytics;

const GROUPS = [
  ['channel', 'Channels'],
  ['channelGroup', 'Channel groups (GA4)'],
  ['referrerHost', 'Referrers'],
  ['country', 'Countries'],
  ['deviceType', 'Devices'],
] as const;

const percent = (x: number | null | undefined) => (x === null || x === undefined ? '—' : `${(x * 100).toFixed(1)}%`);
const seconds = (x: number | null | undefined) => (x === null || x === undefined ? '—' : `${Math.round(x)} s`);
const money = (value: number, currency: string | null) =>
  currency ? new Intl.NumberFormat(undefined, { style: 'currency', currency }).format(value) : value.toLocaleString();

function Change({ value }: { value: number | null | undefined }) {
  if (value === null || value === undefined) return <span class="muted small">no previous value</span>;
  const sign = value > 0 ? '+' : '';
  return <span class={`small ${value < 0 ? 'down' : 'up'}`}>{`${sign}${(value * 100).toFixed(1)}% from the previous period`}</span>;
}

function Kpis({ data }: { data: SiteAnalytics }) {
  const t = data.totals;
  const items: [string, string, keyof SiteMetrics][] = [
    ['Visitors', String(t.visitors ?? '—'), 'visitors'],
    ['Visits', String(t.visits), 'visits'],
    ['Conversion rate', percent(t.conversionRate), 'conversionRate'],
    ['Time per visit', seconds(t.avgTimeSpentSeconds), 'avgTimeSpentSeconds'],
  ];
  return (
    <dl class="kpis">
      {items.map(([label, value, key]) => (
        <div key={key} data-kpi={key}>
          <dt>{label}</dt>
          <dd>
            <strong>{value}</strong> <Change value={data.change?.[key]} />
          </dd>
        </div>
      ))}
    </dl>
  );
}

function Top({ title, rows }: { title: string; rows: { key: string; label: string; visits: number; link?: string }[] }) {
  return (
    <table>
      <caption>{title}</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Visits</th>
        </tr>
      </thead>
      <tbody>
        {rows.length === 0 && (
          <tr>
            <td colSpan={2} class="muted">
              No visits in this range
            </td>
          </tr>
        )}
        {rows.slice(0, 10).map((r) => (
          <tr key={r.key}>
            <td>{r.link ? <a href={r.link}>{r.label}</a> : r.label || <span class="muted">(none)</span>}</td>
            <td class="num">{r.visits}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Goals({ goals }: { goals: GoalMetrics[] }) {
  return (
    <table>
      <caption>Goals</caption>
      <thead>
        <tr>
          <th scope="col">Goal</th>
          <th scope="col">Completions</th>
          <th scope="col">Visitors</th>
          <th scope="col">Value</th>
          <th scope="col">Conversion rate</th>
        </tr>
      </thead>
      <tbody>
        {goals.length === 0 && (
          <tr>
            <td colSpan={5} class="muted">
              No goals yet
            </td>
          </tr>
        )}
        {goals.map((g) => (
          <tr key={g.goalId} data-goal={g.goalId}>
            <td>{g.name}</td>
            <td class="num">{g.completions}</td>
            <td class="num">{g.uniqueCompletions}</td>
            <td class="num">{money(g.value, g.currency)}</td>
            <td class="num">{percent(g.conversionRate)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A funnel as bars, each step's width its share of the first step, with the drop from the step before. */
export function FunnelBars({ funnel, results }: { funnel: Funnel; results: FunnelResults }) {
  const first = results.steps[0]?.visitors ?? 0;
  return (
    <figure class="funnel" data-funnel={funnel.funnelId}>
      <figcaption>{funnel.name}</figcaption>
      <ol>
        {results.steps.map((s, i) => {
          const previous = i === 0 ? undefined : results.steps[i - 1];
          const dropped = previous ? previous.visitors - s.visitors : 0;
          return (
            <li key={s.index} data-step={s.index}>
              <span class="step-name">{s.name}</span>
              <span class="bar" style={{ width: `${first > 0 ? Math.max(1, (s.visitors / first) * 100) : 1}%` }} aria-hidden="true" />
              <span class="step-count">
                {s.visitors} visitors ({percent(s.conversionFromStart)})
                {previous && (
                  <span class="muted small">
                    {' '}
                    — {dropped} dropped ({percent(s.conversionFromPrevious === null ? null : 1 - s.conversionFromPrevious)})
                    {s.medianSecondsFromPrevious !== null && `, median ${seconds(s.medianSecondsFromPrevious)} from the step before`}
                  </span>
                )}
              </span>
            </li>
          );
        })}
      </ol>
    </figure>
  );
}

async function funnels(): Promise<{ funnel: Funnel; results: FunnelResults }[]> {
  const list = must(await api.GET('/v0/funnels', { params: { query: { limit: 10 } } }));
  return Promise.all(
    list.items.map(async (funnel) => ({
      funnel,
      results: must(await api.GET('/v0/funnels/{funnel_id}/results', { params: { path: { funnel_id: funnel.funnelId } } })),
    })),
  );
}

/** "Jane Doe (Acme)", "Acme", or "Someone": only names the tenant already holds. */
const who = (person?: string | null, account?: string | null): string =>
  person ? (account ? `${person} (${account})` : person) : (account ?? 'Someone');

/** The audience a visit was shown, when its person does not already say it: "LinkedIn ads (segment)". */
const shownAs = (name: string, kind?: string): string =>
  kind === 'segment' ? `${name} (segment)` : kind === 'home' ? `${name} (home)` : name;

/** Who is on a page right now, read again every 10 s while the view is open. */
function RealtimeList() {
  const [round, setRound] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setRound((r) => r + 1), 10_000);
    return () => clearInterval(timer);
  }, []);
  const now = useLoad(async () => must(await get('/v0/analytics/realtime', { params: { query: {} } })) as Realtime, [round]);
  return (
    <section class="realtime" aria-labelledby="realtime-title">
      <h3 id="realtime-title">Right now</h3>
      {now.error ? (
        <p role="alert" class="error">
          Realtime visits could not be loaded: {now.error}
        </p>
      ) : (
        now.data && (
          <>
            <p aria-live="polite" data-realtime-count={now.data.count}>
              {plural('visit', now.data.count)} in the last 5 minutes
            </p>
            <ul>
              {(now.data.visits ?? []).map((v, i) => (
                <li key={`${v.audienceId ?? ''}${i}`}>
                  {who(v.personName, v.accountName)} on {v.pageName ?? v.path ?? v.pageId}
                  {v.audienceName && v.audienceKind !== 'person' ? (
                    <span data-audience={v.audienceId} data-segment={v.audienceKind === 'segment' ? '' : undefined}>
                      {' · '}
                      {shownAs(v.audienceName, v.audienceKind)}
                    </span>
                  ) : null}
                  <span class="muted small"> {[v.path, v.channel, v.country].filter(Boolean).join(' · ')}</span>
                </li>
              ))}
            </ul>
          </>
        )
      )}
    </section>
  );
}

export function SiteView() {
  const summary = useLoad(() => site({ compare: 'previous_period', interval: 'day' }), []);
  const groups = useLoad(() => Promise.all(GROUPS.map(([groupBy]) => site({ groupBy }))), []);
  const pages = useLoad(async () => must(await api.GET('/v0/analytics/pages', { params: { query: { limit: 10 } } })).items, []);
  const shown = useLoad(funnels, []);
  const lines: Line[] = summary.data
    ? [
        { label: 'Visits', values: summary.data.series.map((s) => s.visits), color: '#0b57d0' },
        { label: 'Conversions', values: summary.data.series.map((s) => s.conversions), color: '#146c2e' },
      ]
    : [];
  return (
    <Section title="Site">
      <p class="muted">The last 30 days over every page, against the 30 days before.</p>
      <Status loaded={summary}>
        {summary.data && (
          <>
            <Kpis data={summary.data} />
            <TimeChart title="Visits and conversions per day" times={summary.data.series.map((s) => s.start)} lines={lines} />
            <Goals goals={summary.data.goals ?? []} />
          </>
        )}
      </Status>
      <div class="columns">
        <Status loaded={pages}>
          <Top
            title="Top pages"
            rows={(pages.data ?? []).map((p) => ({ key: p.pageId, label: p.pageName, visits: p.visits, link: href('pages', p.pageId) }))}
          />
        </Status>
        <Status loaded={groups}>
          {groups.data?.map((answer, i) => (
            <Top key={GROUPS[i]?.[0]} title={GROUPS[i]?.[1] ?? ''} rows={answer.groups ?? []} />
          ))}
        </Status>
      </div>
      <h3>Funnels</h3>
      <Status loaded={shown}>
        {shown.data?.length === 0 && <p class="muted">No funnels yet.</p>}
        {shown.data?.map(({ funnel, results }) => (
          <FunnelBars key={funnel.funnelId} funnel={funnel} results={results} />
        ))}
      </Status>
      <PipelinePanel groupBy="page" />
      <RealtimeList />
    </Section>
  );
}
