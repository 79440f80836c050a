import { useMemo, useState } from 'preact/hooks';
import { type Audience, api, must, once, type PageAnalytics } from '../api.js';
import { AgentNote } from '../agent-note.js';
import { type Line, TimeChart } from '../chart.js';
import { Badge, LoadMore, Section, Status, useCursorList, useLoad, When, WriteButton } from '../components.js';
import { OpenButton } from '../form.js';
import { href, type PageTab } from '../router.js';
import { Tabs } from '../tabs.js';
import { Experiments } from './experiment.js';
import { NewAudience } from './audience-forms.js';
import { NewSegment } from './segment-forms.js';
import { PageLinks } from './links.js';
import { PageContent } from './content-editor/page-content.js';
import { PageSettings, PageStatusActions } from './page-forms.js';
import { PageMaps } from './page-maps.js';
import { WebVitals } from './web-vitals.js';
import { plural } from '../words.js';

type Interval = 'hour' | 'day' | 'week';
type Metrics = PageAnalytics['totals'];

const RANGES = [
  { days: 1, label: 'Last 24 hours' },
  { days: 7, label: 'Last 7 days' },
  { days: 30, label: 'Last 30 days' },
  { days: 90, label: 'Last 90 days' },
  { days: 365, label: 'Last 365 days' },
];
const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

const percent = (rate: number | null) => (rate === null ? '—' : `${(rate * 100).toFixed(1)} %`);
const seconds = (value: number | null) => (value === null ? '—' : `${value.toFixed(1)} s`);

function Totals({ totals }: { totals: Metrics }) {
  const rows: [string, string | number][] = [
    ['Visits', totals.visits],
    ['Conversions', totals.conversions],
    ['Conversion rate', percent(totals.conversionRate)],
    ['Bounce rate', percent(totals.bounceRate)],
    ['Average time on page', seconds(totals.avgTimeSpentSeconds)],
    ['Clicks', totals.clicks],
    ['Form submits', totals.formSubmits],
  ];
  return (
    <dl class="totals">
      {rows.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd data-total={label}>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function Groups({ title, groups, link }: { title: string; groups: NonNullable<PageAnalytics['groups']>; link?: (key: string) => string }) {
  return (
    <table>
      <caption>{title}</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Visits</th>
          <th scope="col">Conversions</th>
          <th scope="col">Conversion rate</th>
        </tr>
      </thead>
      <tbody>
        {groups.length === 0 && (
          <tr>
            <td colSpan={4} class="muted">
              No visits in this range
            </td>
          </tr>
        )}
        {groups.map((g) => (
          <tr key={g.key}>
            <td>{link ? <a href={link(g.key)}>{g.label}</a> : g.label || <span class="muted">(none)</span>}</td>
            <td class="num">{g.visits}</td>
            <td class="num">{g.conversions}</td>
            <td class="num">{percent(g.conversionRate)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Analytics({ pageId, audiences }: { pageId: string; audiences: Audience[] }) {
  const [interval, setInterval] = useState<Interval>('day');
  const [days, setDays] = useState(30);
  const analytics = useLoad(async () => {
    const startDate = new Date(Date.now() - days * 86_400_000).toISOString();
    const query = { startDate, interval, timeZone };
    const [byAudience, bySource] = await Promise.all([
      api.GET('/v0/pages/{page_id}/analytics', { params: { path: { page_id: pageId }, query: { ...query, groupBy: 'audience' } } }),
      api.GET('/v0/pages/{page_id}/analytics', { params: { path: { page_id: pageId }, query: { ...query, groupBy: 'utmSource' } } }),
    ]);
    return { byAudience: must(byAudience), bySource: must(bySource) };
  }, [pageId, interval, days]);
  const chart = useMemo(() => {
    const series = analytics.data?.byAudience.series ?? [];
    const lines: Line[] = [
      { label: 'Visits', values: series.map((p) => p.visits), color: '#0b57d0' },
      { label: 'Conversions', values: series.map((p) => p.conversions), color: '#b3261e' },
    ];
    return { times: series.map((p) => p.start), lines };
  }, [analytics.data]);
  return (
    <Section title="Analytics">
      <form class="controls" onSubmit={(e) => e.preventDefault()}>
        <label>
          Interval{' '}
          <select value={interval} onChange={(e) => setInterval(e.currentTarget.value as Interval)} name="interval">
            <option value="hour">Hour</option>
            <option value="day">Day</option>
            <option value="week">Week</option>
          </select>
        </label>
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
        <span class="muted small">Time zone: {timeZone}</span>
      </form>
      <Status loaded={analytics}>
        {analytics.data && (
          <>
            <Totals totals={analytics.data.byAudience.totals} />
            <TimeChart title={`Visits and conversions per ${interval}`} times={chart.times} lines={chart.lines} />
            <div class="columns">
              <Groups
                title="Top audiences"
                groups={analytics.data.byAudience.groups ?? []}
                link={(audienceId) => href('pages', pageId, 'audiences', audienceId)}
              />
              <Groups title="Top UTM sources" groups={analytics.data.bySource.groups ?? []} />
            </div>
            <WebVitals vitals={analytics.data.byAudience.webVitals} averageScrollDepth={analytics.data.byAudience.averageScrollDepth} />
          </>
        )}
      </Status>
      <PageMaps pageId={pageId} days={days} audiences={audiences} />
    </Section>
  );
}

/**
 * Regenerate the whole page. What it will queue and skip is asked of the API first (a dry run), so
 * the confirmation names the same audiences the request will, whatever the page's size and however
 * many of them this view has loaded. Audiences a person wrote are skipped: one is regenerated from
 * its own view.
 */
function RegeneratePage({ pageId, changed }: { pageId: string; changed: () => void }) {
  const [notice, setNotice] = useState('');
  const path = { page_id: pageId };
  const regenerate = async () => {
    setNotice('');
    const plan = must(await api.POST('/v0/pages/{page_id}/regenerate', { params: { path }, body: { dryRun: true } }));
    const skipping = plan.skipped.length === 0 ? '' : ` ${plural('audience', plan.skipped.length)} written by a person will be skipped.`;
    if (plan.queued === 0) {
      setNotice(`Nothing to regenerate.${skipping}`);
      return undefined;
    }
    const question = `Regenerate this page? The page agent will rewrite ${plural('audience', plan.queued)}.${skipping}`;
    if (!window.confirm(question)) return undefined;
    return must(await api.POST('/v0/pages/{page_id}/regenerate', { params: { path, header: once() }, body: {} }));
  };
  return (
    <div class="actions">
      <WriteButton
        label="Regenerate"
        name="Regenerate the page's audiences"
        action={regenerate}
        done={(result) => {
          if (result === undefined) return;
          const { queued, skipped } = result as { queued: number; skipped: unknown[] };
          setNotice(`${plural('version', queued)} queued for the page agent; ${plural('written audience', skipped.length)} skipped.`);
          changed();
        }}
      />
      <output aria-live="polite">{notice}</output>
      <AgentNote />
    </div>
  );
}

function Audiences({ pageId, audiences }: { pageId: string; audiences: ReturnType<typeof useCursorList<Audience>> }) {
  const [adding, setAdding] = useState<'audience' | 'segment'>();
  return (
    <Section title="Audiences">
      <RegeneratePage pageId={pageId} changed={audiences.reload} />
      {adding === 'audience' ? (
        <NewAudience pageId={pageId} onClose={() => setAdding(undefined)} />
      ) : adding === 'segment' ? (
        <NewSegment pageId={pageId} onClose={() => setAdding(undefined)} />
      ) : (
        <>
          <OpenButton label="New audience" onClick={() => setAdding('audience')} />
          <OpenButton label="New segment" onClick={() => setAdding('segment')} />
        </>
      )}
      <Status loaded={audiences}>
        {audiences.items.length === 0 ? (
          <p>No audiences.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th scope="col">Audience</th>
                <th scope="col">Status</th>
                <th scope="col">Latest version</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {audiences.items.map((a) => (
                <tr key={a.audienceId}>
                  <td>
                    <a href={href('pages', pageId, 'audiences', a.audienceId)}>{a.effectiveName}</a>
                  </td>
                  <td>
                    <Badge value={a.status} />
                  </td>
                  <td>
                    v{a.latestVersion.versionNumber} <Badge value={a.latestVersion.status} />
                  </td>
                  <td>
                    <When at={a.createdAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <LoadMore list={audiences} />
      </Status>
    </Section>
  );
}

export function PageView({ pageId, tab }: { pageId: string; tab: PageTab }) {
  const page = useLoad(async () => must(await api.GET('/v0/pages/{page_id}', { params: { path: { page_id: pageId } } })), [pageId]);
  const audiences = useCursorList(
    async (cursor) =>
      must(
        await api.GET('/v0/pages/{page_id}/audiences', {
          params: { path: { page_id: pageId }, query: { limit: 100, ...(cursor ? { cursor } : {}) } },
        }),
      ),
    [pageId],
  );
  const [revision, setRevision] = useState(0);
  const saved = () => {
    setRevision((r) => r + 1);
    page.reload();
  };
  return (
    <Status loaded={page}>
      {page.data && (
        <article>
          <p class="crumbs">
            <a href={href('pages')}>Pages</a> /
          </p>
          <h1>
            {page.data.name} <Badge value={page.data.status} />
          </h1>
          <p class="muted">{page.data.title}</p>
          <PageStatusActions page={page.data} changed={page.reload} />
          <Tabs
            label="Editing the page"
            active={tab}
            onChoose={(next) => {
              location.hash = next === 'content' ? href('pages', pageId) : href('pages', pageId, next);
            }}
            tabs={[
              {
                id: 'content',
                title: 'Content',
                panel: <PageContent page={page.data} audiences={audiences.items} revision={revision} saved={saved} />,
              },
              { id: 'audiences', title: 'Audiences', panel: <Audiences pageId={pageId} audiences={audiences} /> },
              { id: 'links', title: 'Links', panel: <PageLinks pageId={pageId} audiences={audiences.items} /> },
              { id: 'experiments', title: 'Experiments', panel: <Experiments pageId={pageId} /> },
              {
                id: 'settings',
                title: 'Settings',
                panel: <PageSettings key={`settings-${page.data.updatedAt}`} page={page.data} saved={saved} />,
              },
            ]}
          />
          <Analytics pageId={pageId} audiences={audiences.items} />
        </article>
      )}
    </Status>
  );
}
