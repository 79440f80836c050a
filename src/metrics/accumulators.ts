import type { Metric, Registry } from 'prom-client';

type Labels = Record<string, string>;

export interface Series {
  observe(value: number): void;
}

interface State {
  labels: Labels;
  /** Observations per bucket (not cumulative), the last one past every bound. */
  counts: number[];
  sum: number;
  count: number;
}

/**
 * A histogram kept as plain numbers, for the series observed on every request and every query:
 * an observation is a few additions on a series the caller holds, where prom-client's own
 * Histogram checks and hashes the labels each time (about a microsecond, several per request:
 * more than the 5% the metrics may cost on a read that takes 70 µs). prom-client still writes the
 * series out: the registry reads this object like one of its own when scraped. `countName`, when
 * given, is a counter of the same observations (`http_requests_total` beside the durations).
 */
export function accumulatingHistogram(
  registry: Registry,
  options: { name: string; help: string; buckets: readonly number[]; countName?: string; countHelp?: string },
): { series(labels: Labels): Series } {
  const { name, help, buckets } = options;
  const all: State[] = [];
  const register = (metric: object) => registry.registerMetric(metric as unknown as Metric);

  register({
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    get: async () => ({
      name,
      help,
      type: 'histogram',
      aggregator: 'sum',
      values: all.flatMap((state) => {
        let cumulative = 0;
        const bucketLines = buckets.map((bound, i) => {
          cumulative += state.counts[i] ?? 0;
          return { metricName: `${name}_bucket`, labels: { ...state.labels, le: bound }, value: cumulative };
        });
        return [
          ...bucketLines,
          { metricName: `${name}_bucket`, labels: { ...state.labels, le: '+Inf' }, value: state.count },
          { metricName: `${name}_sum`, labels: state.labels, value: state.sum },
          { metricName: `${name}_count`, labels: state.labels, value: state.count },
        ];
      }),
    }),
    reset: () => {
      for (const state of all) {
        state.counts.fill(0);
        state.sum = 0;
        state.count = 0;
      }
    },
  });

  const { countName, countHelp = help } = options;
  if (countName !== undefined) {
    register({
      name: countName,
      help: countHelp,
      type: 'counter',
      aggregator: 'sum',
      get: async () => ({
        name: countName,
        help: countHelp,
        type: 'counter',
        aggregator: 'sum',
        values: all.map((state) => ({ labels: state.labels, value: state.count })),
      }),
      reset: () => {},
    });
  }

  return {
    series(labels) {
      const state: State = { labels, counts: new Array<number>(buckets.length + 1).fill(0), sum: 0, count: 0 };
      all.push(state);
      return {
        observe(value) {
          let i = 0;
          while (i < buckets.length && value > (buckets[i] as number)) i++;
          state.counts[i] = (state.counts[i] as number) + 1;
          state.sum += value;
          state.count++;
        },
      };
    },
  };
}
