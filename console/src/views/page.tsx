import { useMemo, useState } from 'preact/hooks';
import { type Audience, api, must, type Page, type PageAnalytics } from '../api.js';
import { type Line, TimeChart } from '../chart.js';
import { Badge, LoadMore, Section, Status, useCursorList, useLoad, When } from '../components.js';
import { OpenButton } from '../form.js';
import { href } from '../router.js';
import { Experiments } from './experiment.js';
import { NewAudience } from './audience-forms.js';
import { PageLinks } from './links.js';
import { ContentEditor, PageSettings, PageStatusActions } from './page-forms.js';

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

function Analytics({ pageId }: { pageId: string }) {
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
          </>
        )}
      </Status>
    </Section>
  );
}

function Audiences({ pageId, audiences }: { pageId: string; audiences: ReturnType<typeof useCursorList<Audience>> }) {
  const [adding, setAdding] = useState(false);
  return (
    <Section title="Audiences">
      {adding ? (
        <NewAudience pageId={pageId} onClose={() => setAdding(false)} />
      ) : (
        <OpenButton label="New audience" onClick={() => setAdding(true)} />
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

/**
 * The preview is a document of its own, opened by a short-lived link the API hands out: it lives
 * under its own policy (which allows the page's inline styles, the tenant's brand among them),
 * not the console's. The console's API is this origin (`connect-src 'self'`), so the link is
 * opened here whatever host PUBLIC_BASE_URL names.
 */
function Preview({ pageId, audiences, revision }: { pageId: string; audiences: Audience[]; revision: number }) {
  const [audienceId, setAudienceId] = useState('');
  const link = useLoad(async () => {
    const query = audienceId ? { audienceId } : {};
    const issued = must(await api.GET('/v0/pages/{page_id}/preview_link', { params: { path: { page_id: pageId }, query } }));
    const { pathname, search } = new URL(issued.url);
    return pathname + search;
  }, [pageId, audienceId, revision]);
  const chosen = audiences.find((a) => a.audienceId === audienceId);
  return (
    <Section title="Preview">
      <label>
        Preview for{' '}
        <select value={audienceId} onChange={(e) => setAudienceId(e.currentTarget.value)} name="previewAudience">
          <option value="">No audience (the page itself)</option>
          {audiences.map((a) => (
            <option key={a.audienceId} value={a.audienceId}>
              {a.effectiveName}
            </option>
          ))}
        </select>
      </label>
      <Status loaded={link}>
        {/* sandbox with no allowances: the document's scripts, forms and navigation of this console are all off */}
        <iframe
          class="preview"
          sandbox=""
          src={link.data ?? 'about:blank'}
          title={`Preview of the page${chosen ? ` for ${chosen.effectiveName}` : ''}`}
          referrerpolicy="no-referrer"
        />
      </Status>
    </Section>
  );
}

export function PageView({ pageId }: { pageId: string }) {
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
          <PageSettings key={`settings-${page.data.updatedAt}`} page={page.data} saved={saved} />
          <Content page={page.data} saved={saved} />
          <Preview pageId={pageId} audiences={audiences.items} revision={revision} />
          <Audiences pageId={pageId} audiences={audiences} />
          <PageLinks pageId={pageId} audiences={audiences.items} />
          <Analytics pageId={pageId} />
          <Experiments pageId={pageId} />
        </article>
      )}
    </Status>
  );
}

function Content({ page, saved }: { page: Page; saved: () => void }) {
  return (
    <Section title="Content">
      <ContentEditor
        label="Page content"
        initial={page.content}
        save={async (content) => {
          must(await api.PATCH('/v0/pages/{page_id}', { params: { path: { page_id: page.pageId } }, body: { content } }));
          saved();
        }}
      />
    </Section>
  );
}
