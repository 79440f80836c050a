import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { timeDomain, valueDomain } from './chart-scale.js';
import { plural } from './words.js';

export interface Line {
  label: string;
  /** null where there is nothing to draw (a rate before its first visit). */
  values: (number | null)[];
  color: string;
}

/**
 * A time series drawn by uPlot on a canvas, with the same numbers as a table for screen readers
 * (and anyone who would rather read). `data-points` says how many points were drawn; `data-x`
 * and `data-y` the axes' domains (seconds, and the unit), set here rather than by uPlot's guess.
 */
export function TimeChart({ title, times, lines, unit = 'count' }: { title: string; times: string[]; lines: Line[]; unit?: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const xs = times.map((t) => Date.parse(t) / 1000);
    const x = timeDomain(xs);
    const y = valueDomain(
      lines.flatMap((l) => l.values),
      unit,
    );
    const plot = new uPlot(
      {
        width: Math.max(320, element.clientWidth || 720),
        height: 260,
        series: [{}, ...lines.map((l) => ({ label: l.label, stroke: l.color, width: 2, points: { show: xs.length <= 60 } }))],
        scales: { x: { time: true, ...(x ? { range: (): [number, number] => x } : {}) }, y: { range: (): [number, number] => y } },
        axes: [{}, { label: unit }],
        legend: { live: false },
        // The domains as drawn, read back from uPlot after each draw (what the tests check).
        hooks: {
          draw: [
            (u) => {
              element.dataset.x = `${u.scales.x?.min} ${u.scales.x?.max}`;
              element.dataset.y = `${u.scales.y?.min} ${u.scales.y?.max}`;
            },
          ],
        },
      },
      [xs, ...lines.map((l) => l.values)],
      element,
    );
    element.dataset.points = String(plot.data[0]?.length ?? 0);

    const resize = () => plot.setSize({ width: Math.max(320, element.clientWidth), height: 260 });
    addEventListener('resize', resize);
    return () => {
      removeEventListener('resize', resize);
      plot.destroy();
    };
  }, [times, lines, unit]);
  return (
    <figure class="chart">
      <div
        ref={box}
        class="plot"
        role="img"
        aria-label={`${title}: a chart of ${plural('point', times.length)}; the same numbers are in the table below`}
      />
      <figcaption>{title}</figcaption>
      <details>
        <summary>Show the numbers</summary>
        <table>
          <caption class="sr-only">{title}</caption>
          <thead>
            <tr>
              <th scope="col">Start</th>
              {lines.map((l) => (
                <th scope="col" key={l.label}>
                  {l.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {times.map((t, i) => (
              <tr key={t}>
                <td>
                  <time dateTime={t}>{new Date(t).toLocaleString()}</time>
                </td>
                {lines.map((l) => (
                  <td key={l.label}>{l.values[i] ?? '—'}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
