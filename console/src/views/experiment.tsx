import { useMemo, useState } from 'preact/hooks';
import { api, type Experiment, type ExperimentResults, must, once, succeeded } from '../api.js';
import { type Line, TimeChart } from '../chart.js';
import {
  Badge,
  LoadMore,
  READ_ONLY_REASON,
  Section,
  Status,
  useCursorList,
  useLoad,
  useSession,
  When,
  WriteButton,
} from '../components.js';
import { PageCrumbs } from '../crumbs.js';
import { OpenButton } from '../form.js';
import { PipelinePanel } from './pipeline.js';
import { href } from '../router.js';
import { NewExperiment } from './experiment-forms.js';
import { CHART_DAYS, CHART_SESSIONS, loadRates } from './experiment-rates.js';
import { plural } from '../words.js';

type Arm = ExperimentResults['arms'][number];

const COLORS = ['#0b57d0', '#b3261e', '#146c2e', '#8a4b00', '#6b3fa0', '#00658f', '#a8004f', '#5c5f00'];
const DECISIONS: Record<ExperimentResults['decision'], string> = {
  collecting: 'Collecting',
  winner: 'A winner',
  no_difference: 'No difference',
};

const percent = (x: number) => `${(x * 100).toFixed(1)}%`;
const signed = (x: number) => `${x >= 0 ? '+' : ''}${percent(x)}`;
const liftText = (lift: Arm['lift']) => (lift ? `${signed(lift.estimate)} (${signed(lift.low)} to ${signed(lift.high)})` : '—');
const pValueText = (p: number | null) => (p === null ? '—' : p < 0.001 ? '< 0.001' : p.toFixed(3));
const pEquals = (p: number | null) => (p !== null && p < 0.001 ? 'p < 0.001' : `p = ${pValueText(p)}`);

/** On a page's view: its experiments, newest first. */
export function Experiments({ pageId }: { pageId: string }) {
  const list = useCursorList(
    async (cursor) =>
      must(
        await api.GET('/v0/pages/{page_id}/experiments', {
          params: { path: { page_id: pageId }, query: { limit: 50, ...(cursor ? { cursor } : {}) } },
        }),
      ),
    [pageId],
  );
  const [adding, setAdding] = useState(false);
  return (
    <Section title="Experiments">
      {adding ? (
        <NewExperiment pageId={pageId} onClose={() => setAdding(false)} />
      ) : (
        <OpenButton label="New experiment" onClick={() => setAdding(true)} />
      )}
      <Status loaded={list}>
        {list.items.length === 0 ? (
          <p>No experiments.</p>
        ) : (
          <table>
            <caption class="sr-only">Experiments on this page</caption>
            <thead>
              <tr>
                <th scope="col">Experiment</th>
                <th scope="col">Kind</th>
                <th scope="col">Status</th>
                <th scope="col">Started</th>
              </tr>
            </thead>
            <tbody>
              {list.items.map((e) => (
                <tr key={e.experimentId}>
                  <td>
                    <a href={href('pages', pageId, 'experiments', e.experimentId)}>{e.name}</a>
                  </td>
                  <td>{e.kind}</td>
                  <td>
                    <Badge value={e.status} />
                  </td>
                  <td>
                    <When at={e.startedAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <LoadMore list={list} />
      </Status>
    </Section>
  );
}

function Arms({ arms }: { arms: Arm[] }) {
  return (
    <table>
      <caption>Arms: the first is the baseline; lift with its 95% interval; p-value the smallest so far</caption>
      <thead>
        <tr>
          {['Arm', 'Weight', 'Units', 'Visits', 'Conversions', 'Conversion rate', 'Lift (95% interval)', 'Probability best', 'p-value'].map(
            (name) => (
              <th scope="col" key={name}>
                {name}
              </th>
            ),
          )}
        </tr>
      </thead>
      <tbody>
        {arms.map((a) => (
          <tr key={a.key} data-arm={a.key}>
            <th scope="row">{a.key}</th>
            <td class="num">{a.weight}</td>
            <td class="num">{a.units}</td>
            <td class="num">{a.visits}</td>
            <td class="num">{a.conversions}</td>
            <td class="num">{percent(a.conversionRate)}</td>
            <td class="num">{liftText(a.lift)}</td>
            <td class="num">{percent(a.probabilityBest)}</td>
            <td class="num">
              {pValueText(a.pValue)}
              {a.current.pValue !== a.pValue && ` (now ${pValueText(a.current.pValue)})`}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Chart({ pageId, experiment }: { pageId: string; experiment: Experiment }) {
  const rates = useLoad(() => loadRates(pageId, experiment), [pageId, experiment]);
  const lines = useMemo<Line[]>(
    () => (rates.data?.arms ?? []).map((a, i) => ({ label: a.key, values: a.values, color: COLORS[i % COLORS.length] ?? '#1f2328' })),
    [rates.data],
  );
  return (
    <Section title="Conversion rate over time">
      <Status loaded={rates}>
        {rates.data === null ? (
          <p>Not started: no visits yet.</p>
        ) : (
          rates.data && (
            <>
              <TimeChart title="Cumulative conversion rate per arm, by day (%)" times={rates.data.times} lines={lines} unit="%" />
              <p class="muted small" data-chart-note="">
                Counted by visit from {plural('session', rates.data.counted)} (the table counts units, so the last point may differ from its
                rate), over at most the last {CHART_DAYS} days of the experiment.
                {rates.data.cappedFrom && (
                  <>
                    {' '}
                    Only the newest {CHART_SESSIONS.toLocaleString('en')} sessions are read: the chart begins at{' '}
                    <When at={rates.data.cappedFrom} />.
                  </>
                )}
              </p>
            </>
          )
        )}
      </Status>
    </Section>
  );
}

function Actions({ experiment, results, done }: { experiment: Experiment; results: ExperimentResults; done: (message: string) => void }) {
  const { readOnly } = useSession();
  const [winner, setWinner] = useState(results.winner ?? '');
  const path = { page_id: experiment.pageId, experiment_id: experiment.experimentId };
  if (experiment.status === 'concluded')
    return (
      <p>
        Concluded with <strong data-winner="">{experiment.winner}</strong> on <When at={experiment.concludedAt} />.
      </p>
    );
  const conclude = async () => {
    if (!winner) throw new Error('Choose the winner first.');
    return must(
      await api.POST('/v0/pages/{page_id}/experiments/{experiment_id}/conclude', { params: { path, header: once() }, body: { winner } }),
    );
  };
  return (
    <div class="actions">
      {experiment.status === 'draft' ? (
        <WriteButton
          label="Start"
          kind="primary"
          confirm={`Start “${experiment.name}”? Its arms are served from the next visit.`}
          action={async () =>
            must(await api.POST('/v0/pages/{page_id}/experiments/{experiment_id}/start', { params: { path, header: once() } }))
          }
          done={() => done('Started.')}
        />
      ) : null}
      {experiment.status === 'draft' && (
        <WriteButton
          label="Delete"
          kind="danger"
          name={`Delete the experiment ${experiment.name}`}
          confirm={`Delete the draft “${experiment.name}”? Nothing was served from it yet.`}
          action={async () => succeeded(await api.DELETE('/v0/pages/{page_id}/experiments/{experiment_id}', { params: { path } }))}
          done={() => {
            location.hash = href('pages', experiment.pageId, 'experiments');
          }}
        />
      )}
      {experiment.status === 'draft' ? null : (
        <>
          <label>
            Winner{' '}
            <select
              name="winner"
              value={winner}
              disabled={readOnly}
              title={readOnly ? READ_ONLY_REASON : undefined}
              onChange={(e) => setWinner(e.currentTarget.value)}
            >
              <option value="">Choose an arm</option>
              {experiment.arms.map((a) => (
                <option key={a.key} value={a.key}>
                  {a.key}
                </option>
              ))}
            </select>
          </label>
          <WriteButton
            label="Conclude"
            kind="primary"
            confirm={
              winner
                ? `Conclude “${experiment.name}” with ${winner}?${experiment.kind === 'versions' ? ' Its version is published.' : ''} This cannot be undone.`
                : undefined
            }
            action={conclude}
            done={() => done(`Concluded with ${winner}.`)}
          />
        </>
      )}
      {readOnly && <span class="muted">{READ_ONLY_REASON}: Start and Conclude are off.</span>}
    </div>
  );
}

export function ExperimentView({ pageId, experimentId }: { pageId: string; experimentId: string }) {
  const path = { page_id: pageId, experiment_id: experimentId };
  const loaded = useLoad(async () => {
    const [experiment, results] = await Promise.all([
      api.GET('/v0/pages/{page_id}/experiments/{experiment_id}', { params: { path } }),
      api.GET('/v0/pages/{page_id}/experiments/{experiment_id}/results', { params: { path } }),
    ]);
    const read = { experiment: must(experiment), results: must(results) };
    // A versions experiment, or a holdout over a segment, belongs to one audience: the breadcrumbs name it.
    const audienceId = read.experiment.audienceId;
    const audience = audienceId
      ? await api.GET('/v0/pages/{page_id}/audiences/{audience_id}', { params: { path: { page_id: pageId, audience_id: audienceId } } })
      : undefined;
    return { ...read, audienceName: audience?.data?.effectiveName };
  }, [pageId, experimentId]);
  const [notice, setNotice] = useState('');
  const done = (message: string) => {
    setNotice(message);
    loaded.reload();
  };
  const { experiment: e, results: r, audienceName } = loaded.data ?? {};
  return (
    <Status loaded={loaded}>
      {e && r && (
        <article>
          <PageCrumbs
            pageId={pageId}
            {...(e.audienceId && audienceName ? { audience: { audienceId: e.audienceId, name: audienceName } } : {})}
          />
          <h1>
            {e.name} <Badge value={e.status} />
          </h1>
          <p class="muted">
            {e.kind === 'versions'
              ? 'Versions of one audience'
              : e.audienceId
                ? `Holdout over the segment ${audienceName ?? ''}: its version against the page as everyone sees it`
                : 'Holdout: personalised against the page itself'}
            , {e.allocation} allocation; started <When at={e.startedAt} />
          </p>
          {r.srm.mismatch && (
            <p role="alert" class="error" data-srm="">
              Sample ratio mismatch ({pEquals(r.srm.pValue)}): the arms' units are not in the proportion of their weights. Something besides
              chance assigns visitors; trust no result until that is explained.
            </p>
          )}
          <Actions key={`${e.status}-${r.winner}`} experiment={e} results={r} done={done} />
          <output aria-live="polite">{notice}</output>
          <Section title="Results">
            <dl class="totals">
              <div>
                <dt>Decision</dt>
                <dd data-decision={r.decision}>{DECISIONS[r.decision]}</dd>
              </div>
              <div>
                <dt>Winner</dt>
                <dd data-results-winner="">{r.winner ?? '—'}</dd>
              </div>
              {(r.current.decision !== r.decision || r.current.winner !== r.winner) && (
                <div>
                  <dt>The data now</dt>
                  <dd data-current-decision={r.current.decision}>
                    {DECISIONS[r.current.decision]}
                    {r.current.winner ? ` (${r.current.winner})` : ''}: a decision stays once made
                  </dd>
                </div>
              )}
            </dl>
            <Arms arms={r.arms} />
          </Section>
          <Chart pageId={pageId} experiment={e} />
          {e.startedAt && <PipelinePanel groupBy="arm" experimentId={e.experimentId} />}
        </article>
      )}
    </Status>
  );
}
