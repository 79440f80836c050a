import { useState } from 'preact/hooks';
import { saveBlob, storedKey } from './api.js';
import { Failure, useBusy } from './components.js';

// The filter bar the lists of visits share (an audience's sessions, the leads): a time range in the
// viewer's time, applied on submit, and the same list as a CSV file.

/** A datetime-local value (the viewer's time) as an RFC 3339 instant, or nothing. */
const instant = (local: string) => (local ? new Date(local).toISOString() : undefined);

export interface Range {
  startDate?: string;
  endDate?: string;
}

/** The range being typed, and the range it stands for once applied. */
export function useRange() {
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const range = (): Range => {
    const next: Range = {};
    const start = instant(from);
    const end = instant(to);
    if (start) next.startDate = start;
    if (end) next.endDate = end;
    return next;
  };
  return { from, setFrom, to, setTo, range };
}

export function RangeFields({ state }: { state: ReturnType<typeof useRange> }) {
  return (
    <>
      <label>
        From <input type="datetime-local" name="from" value={state.from} onInput={(e) => state.setFrom(e.currentTarget.value)} />
      </label>
      <label>
        Until <input type="datetime-local" name="until" value={state.to} onInput={(e) => state.setTo(e.currentTarget.value)} />
      </label>
    </>
  );
}

/** A button that asks the API for the list as CSV (`fetch` does, with the filters applied) and saves it. */
export function CsvButton({ label, name, fetch }: { label: string; name: string; fetch: () => Promise<Blob> }) {
  const { error, run } = useBusy();
  const download = () => run(async () => saveBlob(await fetch(), name));
  return (
    <>
      <button type="button" class="secondary" onClick={download} disabled={!storedKey()}>
        {label}
      </button>
      <Failure text={error} />
    </>
  );
}
