import type { PageAnalytics } from '../api.js';

type Vitals = PageAnalytics['webVitals'];
type Vital = keyof Vitals;

/**
 * Google's thresholds (web.dev/articles/vitals): a value at most `good` is good, over `poor` is
 * poor, as the API counts its shares. Milliseconds, CLS unitless.
 */
const VITALS: { key: Vital; name: string; good: number; poor: number }[] = [
  { key: 'lcp', name: 'Largest Contentful Paint (LCP)', good: 2500, poor: 4000 },
  { key: 'inp', name: 'Interaction to Next Paint (INP)', good: 200, poor: 500 },
  { key: 'cls', name: 'Cumulative Layout Shift (CLS)', good: 0.1, poor: 0.25 },
  { key: 'fcp', name: 'First Contentful Paint (FCP)', good: 1800, poor: 3000 },
  { key: 'ttfb', name: 'Time to First Byte (TTFB)', good: 800, poor: 1800 },
];

/** As Google writes each threshold: seconds for the loading metrics, milliseconds for INP. */
function written(key: Vital, value: number): string {
  if (key === 'cls') return String(Math.round(value * 1000) / 1000);
  if (key === 'inp') return `${Math.round(value)} ms`;
  return `${Math.round(value / 10) / 100} s`;
}

const share = (value: number | null) => (value === null ? '—' : `${Math.round(value * 100)} %`);

function rating(value: number, good: number, poor: number): string {
  return value <= good ? 'good' : value <= poor ? 'needs improvement' : 'poor';
}

/** The page's field web vitals (issue 49): p75 of each, and the shares of visits by Google's thresholds. */
export function WebVitals({ vitals, averageScrollDepth }: { vitals: Vitals; averageScrollDepth: number | null }) {
  return (
    <table class="vitals">
      <caption>Web vitals of real visits (75th percentile, Google's thresholds)</caption>
      <thead>
        <tr>
          <th scope="col">Metric</th>
          <th scope="col">p75</th>
          <th scope="col">Visits</th>
          <th scope="col">Good</th>
          <th scope="col">Needs improvement</th>
          <th scope="col">Poor</th>
          <th scope="col">Thresholds</th>
        </tr>
      </thead>
      <tbody>
        {VITALS.map(({ key, name, good, poor }) => {
          const v = vitals[key];
          return (
            <tr key={key} data-vital={key}>
              <th scope="row">{name}</th>
              <td class="num">
                {v.p75 === null ? (
                  <span class="muted">No visits</span>
                ) : (
                  <>
                    {written(key, v.p75)}{' '}
                    <span class={`rating rating-${rating(v.p75, good, poor).replace(' ', '-')}`}>{rating(v.p75, good, poor)}</span>
                  </>
                )}
              </td>
              <td class="num">{v.visits}</td>
              <td class="num">{share(v.good)}</td>
              <td class="num">{share(v.needsImprovement)}</td>
              <td class="num">{share(v.poor)}</td>
              <td data-thresholds="">
                good ≤ {written(key, good)}, poor &gt; {written(key, poor)}
              </td>
            </tr>
          );
        })}
      </tbody>
      <tfoot>
        <tr>
          <th scope="row">Average scroll depth</th>
          <td class="num" colSpan={6} data-average-scroll="">
            {averageScrollDepth === null ? '—' : `${Math.round(averageScrollDepth)} %`}
          </td>
        </tr>
      </tfoot>
    </table>
  );
}
