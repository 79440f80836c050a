import { createContext, type ComponentChildren } from 'preact';
import { useCallback, useContext, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';

/** Who is signed in: a read-only key gets every write control disabled. */
export interface Session {
  tenantId: string;
  readOnly: boolean;
}
export const SessionContext = createContext<Session>({ tenantId: '', readOnly: true });
export const useSession = (): Session => useContext(SessionContext);

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload: () => void;
}

/**
 * Loads once per change of `deps`; a late answer for old deps is dropped. A reload keeps what was
 * loaded on screen until the new answer comes (forms below keep their state and notices); new
 * deps clear it, so another resource's data is never shown as this one's.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [round, setRound] = useState(0);
  const current = useRef(0);
  const lastDeps = useRef<unknown[]>(deps);
  useEffect(() => {
    const ticket = ++current.current;
    const sameDeps = deps.length === lastDeps.current.length && deps.every((d, i) => Object.is(d, lastDeps.current[i]));
    lastDeps.current = deps;
    setState((s) => (sameDeps ? { ...s, loading: true } : { loading: true }));
    load().then(
      (data) => ticket === current.current && setState({ data, loading: false }),
      (err: unknown) => ticket === current.current && setState({ error: messageOf(err), loading: false }),
    );
  }, [...deps, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

export const messageOf = (err: unknown): string =>
  err instanceof ApiError ? `${err.message} (${err.status})` : err instanceof Error ? err.message : String(err);

export function Status({
  loaded,
  children,
}: {
  loaded: Pick<Loaded<unknown>, 'error' | 'loading'> & { data?: unknown };
  children?: ComponentChildren;
}) {
  if (loaded.error)
    return (
      <p role="alert" class="error">
        {loaded.error}
      </p>
    );
  if (loaded.loading && loaded.data === undefined)
    return (
      <p aria-live="polite" class="muted">
        Loading…
      </p>
    );
  return <>{children}</>;
}

/** Why a control's request failed, announced beside it; nothing when it did not. */
export function Failure({ text }: { text: string | undefined }) {
  if (!text) return null;
  return (
    <span role="alert" class="error">
      {text}
    </span>
  );
}

/** A request a control sends: busy while it runs, and its failure in words (cleared when it runs again). */
export function useBusy() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const run = async (work: () => Promise<unknown>): Promise<boolean> => {
    setBusy(true);
    setError(undefined);
    try {
      await work();
      return true;
    } catch (err) {
      setError(messageOf(err));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}

export const READ_ONLY_REASON = 'This API key may only read';

/** A button that writes: disabled for a read-only key, busy while its request runs, and it reports failure. */
export function WriteButton({
  label,
  action,
  done,
  kind = 'secondary',
  confirm,
  name,
}: {
  label: string;
  action: () => Promise<unknown>;
  done?: (result: unknown) => void;
  kind?: 'primary' | 'secondary' | 'danger';
  /** Asked first (the browser's own dialog, which every assistive technology knows); declined, nothing is sent. */
  confirm?: string | undefined;
  /** The accessible name, when the visible label needs its object said (it must start with the label). */
  name?: string;
}) {
  const { readOnly } = useSession();
  const { busy, error, run } = useBusy();
  const click = async () => {
    if (confirm !== undefined && !window.confirm(confirm)) return;
    await run(async () => done?.(await action()));
  };
  return (
    <span class="write">
      <button
        type="button"
        class={kind}
        disabled={readOnly || busy}
        aria-busy={busy}
        title={readOnly ? READ_ONLY_REASON : undefined}
        data-write=""
        aria-label={name}
        onClick={click}
      >
        {label}
      </button>
      <Failure text={error} />
    </span>
  );
}

export function When({ at }: { at: string | null | undefined }) {
  if (!at) return <span class="muted">—</span>;
  return <time dateTime={at}>{new Date(at).toLocaleString()}</time>;
}

export const Badge = ({ value }: { value: string }) => <span class={`badge badge-${value}`}>{value}</span>;

export function Section({ title, children }: { title: string; children: ComponentChildren }) {
  const id = `h-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

/** Follows nextCursor on demand: the list grows with "Load more". */
export function useCursorList<T>(
  load: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor: string | null }>,
  deps: unknown[],
) {
  // The first page is useLoad's answer, so a slower, older load never overwrites a newer list; the
  // pages loaded after it count only while that first page is the one they followed.
  const first = useLoad(() => load(undefined), deps);
  const [later, setLater] = useState<{ after: unknown; items: T[]; next: string | null }>();
  const grown = later && later.after === first.data ? later : undefined;
  const items = grown ? [...(first.data?.items ?? []), ...grown.items] : (first.data?.items ?? []);
  const next = grown ? grown.next : (first.data?.nextCursor ?? null);
  const [more, setMore] = useState<string>();
  const loadMore = async () => {
    if (!next) return;
    const after = first.data;
    try {
      const page = await load(next);
      setLater({ after, items: [...(grown?.items ?? []), ...page.items], next: page.nextCursor });
    } catch (err) {
      setMore(messageOf(err));
    }
  };
  return { ...first, items, hasMore: next !== null, loadMore, moreError: more };
}

/** What useCursorList gives: a loaded list that grows with "Load more". */
export type CursorList<T> = ReturnType<typeof useCursorList<T>>;

/**
 * A list as a table: `empty` said when it has nothing, else a header of `columns` (an empty name is
 * a column of actions, named for screen readers) and a row of each item; "Load more" below.
 */
export function ListTable<T>({
  list,
  empty,
  columns,
  caption,
  row,
}: {
  list: CursorList<T>;
  empty: string;
  columns: string[];
  caption?: string;
  row: (item: T) => ComponentChildren;
}) {
  return (
    <Status loaded={list}>
      {list.items.length === 0 ? (
        <p>{empty}</p>
      ) : (
        <table>
          {caption && <caption class="sr-only">{caption}</caption>}
          <thead>
            <tr>
              {columns.map((name) => (
                <th scope="col" key={name}>
                  {name || <span class="sr-only">Actions</span>}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>{list.items.map(row)}</tbody>
        </table>
      )}
      <LoadMore list={list} />
    </Status>
  );
}

export function LoadMore({ list }: { list: { hasMore: boolean; loadMore: () => void; moreError?: string | undefined } }) {
  if (!list.hasMore) return null;
  return (
    <p>
      <button type="button" class="secondary" onClick={list.loadMore}>
        Load more
      </button>
      {list.moreError && <span role="alert">{list.moreError}</span>}
    </p>
  );
}
