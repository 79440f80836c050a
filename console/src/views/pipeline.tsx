import { useState } from 'preact/hooks';
import { api, type components, must } from '../api.js';
import { Status, useLoad } from '../components.js';

// The influenced pipeline (issue 40): deals of the last 90 days whose account visited in the 90
// days before each deal, by page on the Site view and by arm on an experiment's view.

type Pipeline = components['schemas']['Pipeline'];
type Sums = components['schemas']['PipelineTotals'];
type Model = 'any' | 'first' | 'last';

const MODELS: [Model, string][] = [
  ['any', 'Every visit counts'],
  ['first', 'First visit'],
  ['last', 'Last visit'],
];
const DAY_MS = 86_400_000;

/** Amounts per currency, never added across currencies. */
function amounts(sums: Sums, won: boolean): string {
  if (sums.byCurrency.length === 0) return '—';
  return sums.byCurrency
    .map((c) => new Intl.NumberFormat(undefined, { style: 'currency', currency: c.currency }).format(won ? c.wonAmount : c.amount))
    .join(' + ');
}

export function PipelinePanel({ groupBy, experimentId }: { groupBy: 'page' | 'arm'; experimentId?: string }) {
  const [model, setModel] = useState<Model>('any');
  const loaded = useLoad(async (): Promise<Pipeline> => {
    const end = new Date(Math.ceil(Date.now() / DAY_MS) * DAY_MS);
    const query = {
      startDate: new Date(end.getTime() - 90 * DAY_MS).toISOString(),
      endDate: end.toISOString(),
      model,
      groupBy,
      ...(experimentId ? { experimentId } : {}),
    };
    return must(await api.GET('/v0/analytics/pipeline', { params: { query } }));
  }, [model, groupBy, experimentId]);
  const title = groupBy === 'arm' ? 'Pipeline by arm' : 'Pipeline by page';
  const data = loaded.data;
  return (
    <section class="pipeline" aria-labelledby={`pipeline-${groupBy}`} data-pipeline={groupBy}>
      <h3 id={`pipeline-${groupBy}`}>{title}</h3>
      <p class="muted small">
        Deals created in the last 90 days whose company visited in the 90 days before.
        {groupBy === 'arm' &&
          ' People, not companies, are split between arms: this shows where the money came from, not proof that a version caused it.'}
      </p>
      <label>
        Credit{' '}
        <select value={model} onChange={(e) => setModel((e.currentTarget as HTMLSelectElement).value as Model)}>
          {MODELS.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </label>
      <Status loaded={loaded}>
        {data && (
          <table>
            <caption>
              {data.totals.deals} deals, {amounts(data.totals, false)}; won {data.totals.wonDeals}, {amounts(data.totals, true)}
            </caption>
            <thead>
              <tr>
                <th scope="col">{groupBy === 'arm' ? 'Arm' : 'Page'}</th>
                <th scope="col">Deals</th>
                <th scope="col">Amount</th>
                <th scope="col">Won</th>
                <th scope="col">Won amount</th>
              </tr>
            </thead>
            <tbody>
              {data.groups.length === 0 && (
                <tr>
                  <td colSpan={5} class="muted">
                    No deals from visiting companies yet
                  </td>
                </tr>
              )}
              {data.groups.map((g) => (
                <tr key={g.key} data-group={g.key}>
                  <td>{g.label}</td>
                  <td class="num">{g.deals}</td>
                  <td class="num">{amounts(g, false)}</td>
                  <td class="num">{g.wonDeals}</td>
                  <td class="num">{amounts(g, true)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Status>
    </section>
  );
}
