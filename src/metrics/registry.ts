import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { accumulatingHistogram, type Series } from './accumulators.js';

/**
 * One app's metrics: a prom-client registry of its own (tests build several apps in one process),
 * and the three kinds of series, named `pam_...`. A part of the service that wants a series of its
 * own (the page agent's queue, say) asks for it here, from the `MetricsRegistry` app.ts hands it:
 *
 *   const generations = metrics.counter('agent_generations_total', 'Generations by outcome', ['outcome']);
 *   generations.inc({ outcome: 'succeeded' });
 *
 * Labels take a bounded set of values only (an outcome, a kind, a route template): never an id, a
 * key, a tenant, a host or anything a client chooses, or the series multiply without end.
 */
export interface MetricsRegistry {
  /** `collect`, when given, is read at scrape time (a count kept elsewhere: set it with `setCounter`). */
  counter<L extends string>(
    name: string,
    help: string,
    labelNames?: readonly L[],
    collect?: (counter: Counter<L>) => Promise<void> | void,
  ): Counter<L>;
  gauge<L extends string>(
    name: string,
    help: string,
    labelNames?: readonly L[],
    collect?: (gauge: Gauge<L>) => Promise<void> | void,
  ): Gauge<L>;
  histogram<L extends string>(name: string, help: string, buckets: number[], labelNames?: readonly L[]): Histogram<L>;
  /**
   * A histogram for a hot path (every request, every query): each label set is a series the caller
   * keeps, observed by plain arithmetic (src/metrics/accumulators.ts). `count` adds a counter of
   * the same observations.
   */
  hotHistogram(
    name: string,
    help: string,
    buckets: number[],
    count?: { name: string; help: string },
  ): { series(labels: Record<string, string>): Series };
  /** The Prometheus text exposition of every series, and its content type. */
  expose(): Promise<{ contentType: string; body: string }>;
}

export const PREFIX = 'pam_';

export function createMetricsRegistry(): MetricsRegistry {
  const registry = new Registry();
  // Node's own: CPU, memory, heap, event-loop lag, handles, GC (prefixed like the rest).
  collectDefaultMetrics({ register: registry, prefix: PREFIX });
  return {
    counter: (name, help, labelNames = [], collect) =>
      new Counter({ name: PREFIX + name, help, labelNames, registers: [registry], ...atScrape(collect) }),
    gauge: (name, help, labelNames = [], collect) =>
      new Gauge({ name: PREFIX + name, help, labelNames, registers: [registry], ...atScrape(collect) }),
    histogram: (name, help, buckets, labelNames = []) =>
      new Histogram({ name: PREFIX + name, help, buckets, labelNames, registers: [registry] }),
    hotHistogram: (name, help, buckets, count) =>
      accumulatingHistogram(registry, {
        name: PREFIX + name,
        help,
        buckets,
        ...(count ? { countName: PREFIX + count.name, countHelp: count.help } : {}),
      }),
    expose: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
  };
}

/** prom-client's `collect` option (called with the metric as `this`) for a `collect(metric)`, when given. */
function atScrape<M>(collect: ((metric: M) => Promise<void> | void) | undefined) {
  return collect
    ? {
        collect: function (this: M) {
          return collect(this);
        },
      }
    : {};
}

/** Sets an unlabelled counter to a total counted elsewhere (in a `collect`): a counter has no `set`. */
export function setCounter(counter: Counter, total: number): void {
  counter.reset();
  counter.inc(total);
}
