/**
 * Work that gives the event loop back every SLICE_MS: the report's reads answer synchronously on
 * SQLite, and a sort or a walk of a large tenant's touches would otherwise hold every other
 * request of the process (issue 45).
 */

/** Milliseconds of work between two turns of the loop, at most (a check's granularity aside). */
export const SLICE_MS = 5;

/** Gives the loop back: the statements of one turn would otherwise run back to back on SQLite. */
export const breathe = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A clock that says when a slice is spent; `pause()` gives the loop back then. */
export function slicer() {
  let since = performance.now();
  return async (): Promise<void> => {
    if (performance.now() - since <= SLICE_MS) return;
    await breathe();
    since = performance.now();
  };
}

const RUN = 32;

/**
 * `order` sorted by `compare`, stably: a bottom-up merge sort (runs of 32 by insertion, then merges)
 * that gives the loop back between its steps, where Array.prototype.sort would hold it for the
 * whole sort (200,000 elements take a few hundred milliseconds on a busy machine). May reuse `order`.
 */
export async function sortSliced(order: Int32Array, compare: (a: number, b: number) => number): Promise<Int32Array> {
  const n = order.length;
  const pause = slicer();
  let from: Int32Array = order;
  let to: Int32Array = new Int32Array(n);
  for (let lo = 0; lo < n; lo += RUN) {
    const hi = Math.min(lo + RUN, n);
    for (let i = lo + 1; i < hi; i++) {
      const v = from[i] as number;
      let j = i - 1;
      while (j >= lo && compare(from[j] as number, v) > 0) {
        from[j + 1] = from[j] as number;
        j--;
      }
      from[j + 1] = v;
    }
    await pause();
  }
  for (let width = RUN; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let i = lo;
      let j = mid;
      let k = lo;
      while (i < mid && j < hi) {
        // Equal elements keep their order: the left run's first.
        to[k++] = compare(from[j] as number, from[i] as number) < 0 ? (from[j++] as number) : (from[i++] as number);
        // The last merges are as long as the whole: they give the loop back too.
        if ((k & 4095) === 0) await pause();
      }
      while (i < mid) to[k++] = from[i++] as number;
      while (j < hi) to[k++] = from[j++] as number;
      await pause();
    }
    [from, to] = [to, from];
  }
  return from;
}
