import { useEffect, useMemo, useRef, useState } from 'preact/hooks';

export interface MapSection {
  index: number;
  heading: string;
  clicks: number;
  cells: { x: number; y: number; clicks: number }[];
}

interface Box {
  index: number;
  top: number;
  left: number;
  width: number;
  height: number;
}

/**
 * The preview's document made fit for a frame of the console's own origin: its `<style>` texts
 * are taken out (the console's policy allows no inline style; they are adopted by script below,
 * as the CSSOM allows), and what would load or run under that policy (scripts, fonts, embedded
 * players) is dropped, so that only the page's markup and its own styles remain.
 */
function prepare(html: string): { doc: string; css: string } {
  // Taken out before parsing: a `<style>` parsed here, even into a document never shown, is checked
  // against the console's policy. A style element's text ends at the first `</style`, as the HTML
  // parser ends it.
  const styles: string[] = [];
  const rest = html.replace(/<style\b[^>]*>([\s\S]*?)<\/style\s*>/gi, (_, css: string) => {
    styles.push(css);
    return '';
  });
  const parsed = new DOMParser().parseFromString(rest, 'text/html');
  const css = styles.join('\n');
  for (const el of parsed.querySelectorAll('style, script, link, base, meta[http-equiv]')) el.remove();
  for (const el of parsed.querySelectorAll('iframe')) el.removeAttribute('src');
  return { doc: `<!doctype html>${parsed.documentElement.outerHTML}`, css };
}

/** At most this wide on screen, so that the scroll map fits beside it: a wider layout is shown smaller, frame and cells alike. */
const SHOWN_WIDTH = 640;

/** A cell's colour: from pale yellow (few clicks) to red (the most clicks of any cell shown). */
const colour = (share: number) => `hsla(${Math.round(55 - 55 * share)}, 95%, 50%, ${(0.35 + 0.5 * share).toFixed(2)})`;

/**
 * The click map over the page's preview: the document is laid out at the viewport's width in a
 * frame of this origin without scripts (`sandbox="allow-same-origin"`), so that the console can
 * measure each `[data-pam-section]` box, and each section's 20 × 20 cells are drawn over its box,
 * as the measuring script cut it.
 */
export function MapFrame({ html, width, sections, label }: { html: string; width: number; sections: MapSection[]; label: string }) {
  const frame = useRef<HTMLIFrameElement>(null);
  const [boxes, setBoxes] = useState<Box[]>([]);
  const [height, setHeight] = useState(600);
  const prepared = useMemo(() => prepare(html), [html]);
  const max = Math.max(1, ...sections.flatMap((s) => s.cells.map((c) => c.clicks)));
  /** The frame holds the prepared document (not the blank one before it, nor the last one). */
  const loaded = useRef(false);

  const measure = () => {
    const win = frame.current?.contentWindow;
    const doc = frame.current?.contentDocument;
    if (!win || !doc || !frame.current || !loaded.current) return;
    if (doc.adoptedStyleSheets.length === 0) {
      // Made in the frame's window: a sheet is adopted only by a document of the window that made it.
      const sheet = new (win as Window & typeof globalThis).CSSStyleSheet();
      sheet.replaceSync(prepared.css);
      doc.adoptedStyleSheets = [sheet];
      // An image that arrives later moves the sections below it.
      doc.addEventListener('load', measure, true);
    }
    // From a small frame, as it would shrink at a wider viewport; twice, as a section sized by the viewport's height grows with it.
    frame.current.style.height = '600px';
    for (let pass = 0; pass < 2; pass++) frame.current.style.height = `${doc.documentElement.scrollHeight}px`;
    setHeight(doc.documentElement.scrollHeight);
    setBoxes(
      [...doc.querySelectorAll<HTMLElement>('[data-pam-section]')].map((el) => {
        const r = el.getBoundingClientRect();
        return {
          index: Number(el.dataset.pamSection),
          top: r.top + win.scrollY,
          left: r.left + win.scrollX,
          width: r.width,
          height: r.height,
        };
      }),
    );
  };

  useEffect(() => {
    loaded.current = false;
  }, [prepared]);
  // Another viewport: the same document laid out again at its width.
  useEffect(measure, [width]);

  return (
    <div class="map-stage" style={{ width: `${width}px`, height: `${height}px`, zoom: Math.min(1, SHOWN_WIDTH / width).toFixed(3) }}>
      <iframe
        ref={frame}
        class="map-page"
        srcdoc={prepared.doc}
        sandbox="allow-same-origin"
        onLoad={() => {
          loaded.current = true;
          measure();
        }}
        title={label}
        tabIndex={-1}
        style={{ width: `${width}px` }}
      />
      <div class="map-layer" data-map-layer="" aria-hidden="true">
        {boxes.map((box) => {
          const section = sections.find((s) => s.index === box.index);
          return (
            <div
              key={box.index}
              class="map-section"
              data-map-section={box.index}
              style={{ top: `${box.top}px`, left: `${box.left}px`, width: `${box.width}px`, height: `${box.height}px` }}
            >
              {section?.cells.map((c) => (
                <span
                  key={`${c.x},${c.y}`}
                  class="map-cell"
                  data-cell={`${c.x},${c.y}`}
                  data-clicks={c.clicks}
                  title={`${c.clicks} in this cell`}
                  style={{ left: `${c.x * 5}%`, top: `${c.y * 5}%`, background: colour(c.clicks / max) }}
                />
              ))}
            </div>
          );
        })}
      </div>
    </div>
  );
}
