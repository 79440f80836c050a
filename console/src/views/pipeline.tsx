import { useState } from 'preact/hooks';
import { api, type components, must } from '../api.js';
import { Status, useLoad } from '../components.js';
import { plural } from '../words.js';

// The influenced pipeline (issue 40): deals of the last 90 days whose account visited in the 90
// days before each deal, by page on the Site view and by arm on an experiment's view. Issue 49:
// the multi-touch models, each said in a line, and each group's credited share.

type Pipeline = components['schemas']['Pipeline'];
type Model = Pipeline['model'];
type Sums = { byCurrency: { currency: string; amount: number; wonAmount: number; attributedAmount?: number }[] };

/** Each model: its name in the picker, and what it means for a page or an arm (time_decay's with its half-life in days). */
const MODELS: [Model, string, (noun: string, halfLifeDays: number | null) => string][] = [
  ['any', 'Every visit counts', (n) => `Each ${n} a company visited counts the whole deal; the credit splits evenly between them.`],
  ['first', 'First visit', (n) => `The ${n} of the first visit in the window gets the whole deal.`],
  ['last', 'Last visit', (n) => `The ${n} of the last visit before the deal gets the whole deal.`],
  ['linear', 'Linear', (n) => `Each of the visits before the deal gives its ${n} an equal share of it.`],
  [
    'time_decay',
    'Time decay',
    (n, h) => `Each visit gives its ${n} a share that halves for every ${h ?? '…'} days it came before the deal.`,
  ],
  ['position', 'U-shaped', (n) => `The first and the last visit give their ${n} 40% each; the visits between share 20%.`],
];
const DAY_MS = 86_400_000;

/** Amounts per currency, never added across currencies. */
function amounts(sums: Sums, pick: 'amount' | 'wonAmount' | 'attributedAmount'): string {
  if (sums.byCurrency.length === 0) return '—';
  return sums.byCurrency
    .map((c) => new Intl.NumberFormat(undefined, { style: 'currency', currency: c.currency }).format(c[pick] ?? 0))
    .join(' + ');
}

const share = (n: number) => new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 }).format(n);

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
  const meaning = MODELS.find(([value]) => value === model)?.[2](
    groupBy === 'arm' ? 'arm' : 'page',
    data?.model === 'time_decay' ? data.halfLifeDays : null,
  );
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
      <p class="muted small" data-model-meaning>
        {meaning}
      </p>
      <Status loaded={loaded}>
        {data && (
          <table>
            <caption>
              {plural('deal', data.totals.deals)}, {amounts(data.totals, 'amount')}; won {plural('deal', data.totals.wonDeals)},{' '}
              {amounts(data.totals, 'wonAmount')}
            </caption>
            <thead>
              <tr>
                <th scope="col">{groupBy === 'arm' ? 'Arm' : 'Page'}</th>
                <th scope="col">Deals</th>
                <th scope="col">Amount</th>
                <th scope="col">Won</th>
                <th scope="col">Won amount</th>
                <th scope="col">Credited deals</th>
                <th scope="col">Credited amount</th>
              </tr>
            </thead>
            <tbody>
              {data.groups.length === 0 && (
                <tr>
                  <td colSpan={7} class="muted">
                    No deals from visiting companies yet
                  </td>
                </tr>
              )}
              {data.groups.map((g) => (
                <tr key={g.key} data-group={g.key}>
                  <td>{g.label}</td>
                  <td class="num">{g.deals}</td>
                  <td class="num">{amounts(g, 'amount')}</td>
                  <td class="num">{g.wonDeals}</td>
                  <td class="num">{amounts(g, 'wonAmount')}</td>
                  <td class="num">{share(g.attributedDeals)}</td>
                  <td class="num">{amounts(g, 'attributedAmount')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Status>
    </section>
  );
}
