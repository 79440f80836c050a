// The chart's domains, kept out of uPlot's auto-ranging: given one point, uPlot widened the time
// axis by years either side (an experiment's one day drawn on an axis from 2027 to 2029) and
// doubled the value axis (a 100% rate drawn up to 200%). Pure, so a test runs it without a browser.

const DAY_SECONDS = 86_400;

/** The time axis, in seconds: exactly the first to the last point; one point gets its own day. */
export function timeDomain(xs: readonly number[]): [number, number] | null {
  const first = xs[0];
  const last = xs.at(-1);
  if (first === undefined || last === undefined) return null;
  return last > first ? [first, last] : [first, first + DAY_SECONDS];
}

/** The smallest of 1, 2, 2.5, 5 times a power of ten at or above `x`: axis tops people read at a glance. */
function niceCeil(x: number): number {
  const power = 10 ** Math.floor(Math.log10(x));
  const step = [1, 2, 2.5, 5, 10].find((m) => m * power >= x - 1e-9) ?? 10;
  return step * power;
}

/**
 * The value axis: from 0 to a round number a little above the highest value. Proportions (`%`)
 * never go past 100 and, when every value is small, stay zoomed in; an empty or all-zero series
 * gets 0 to 1 (a flat line at the bottom, not a line in the middle).
 */
export function valueDomain(values: readonly (number | null)[], unit: string): [number, number] {
  const max = Math.max(0, ...values.filter((v): v is number => v !== null && Number.isFinite(v)));
  if (max === 0) return [0, unit === '%' ? 10 : 1];
  const top = niceCeil(max * 1.1);
  return [0, unit === '%' ? Math.min(100, top) : top];
}
