import type { paths } from '../api.js';

type Heatmap = paths['/v0/pages/{page_id}/heatmap']['get']['responses'][200]['content']['application/json'];

const W = 320;
const H = 160;
const percentOf = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part / whole) * 100));

/** The share of visits that scrolled at least each depth, 0 to 100 %, as a falling curve. */
function DepthCurve({ scroll, visits }: { scroll: NonNullable<Heatmap['scroll']>; visits: number }) {
  const points = scroll.map((p) => `${(p.depth / 100) * W},${H - (visits === 0 ? 0 : (p.visits / visits) * H)}`).join(' ');
  const said = scroll
    .filter((p) => p.depth % 25 === 0)
    .map((p) => `${percentOf(p.visits, visits)} % reached ${p.depth} %`)
    .join(', ');
  return (
    <figure class="chart depth-curve">
      <svg viewBox={`-44 -10 ${W + 54} ${H + 30}`} role="img" aria-label={`Scroll depth: ${said}`} data-depth-curve="">
        <line x1={0} y1={H} x2={W} y2={H} class="axis" />
        <line x1={0} y1={0} x2={0} y2={H} class="axis" />
        <text x={-4} y={4} text-anchor="end">
          100 %
        </text>
        <text x={-4} y={H} text-anchor="end">
          0
        </text>
        <text x={W} y={H + 16} text-anchor="end">
          100 % deep
        </text>
        <polyline points={points} class="curve" />
      </svg>
      <figcaption>Visits that scrolled at least this far down the page</figcaption>
    </figure>
  );
}

/**
 * The scroll map beside the click map: for each section, the share of visits that saw at least
 * half of it (its `reached` over the visits), and the section's clicks of the map shown.
 */
export function ScrollMap({ heatmap, clicks, kind }: { heatmap: Heatmap; clicks: Heatmap; kind: 'click' | 'rage' }) {
  const { visits } = heatmap;
  return (
    <div class="scroll-map">
      <ol class="reach">
        {heatmap.sections.map((s) => {
          const share = percentOf(s.reached, visits);
          const n = clicks.sections.find((c) => c.index === s.index)?.clicks ?? 0;
          return (
            <li key={s.index} data-reach-section={s.index}>
              <strong>{s.heading || `Section ${s.index + 1}`}</strong> <span class="muted small">({s.layout})</span>
              <span class="bar" style={{ width: `${Math.max(1, share)}%` }} aria-hidden="true" />
              <span data-reached="">{share}% of visits reached this section</span>
              <span class="muted small">
                {' '}
                · {n} {kind === 'rage' ? (n === 1 ? 'rage click' : 'rage clicks') : n === 1 ? 'click' : 'clicks'}
              </span>
            </li>
          );
        })}
      </ol>
      {heatmap.scroll && <DepthCurve scroll={heatmap.scroll} visits={visits} />}
    </div>
  );
}
