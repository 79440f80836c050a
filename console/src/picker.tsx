import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { messageOf } from './components.js';
import { FieldNotes, useProblems } from './form.js';

// Pick, don't paste (issue 46): a field that takes the API's ids is searched by name, and shows
// names; the ids themselves are in its hint, for someone who also uses the API. One control for
// one id or several, a combobox with a list of matches (WAI-ARIA's pattern: arrows move, Enter
// picks, Escape closes).

/** Something to pick: its id (what the API takes), its name (what a person reads), and a detail. */
export interface Choice {
  id: string;
  name: string;
  detail?: string;
}

/** At most this many matches are listed: a longer list is narrowed by typing. */
const SHOWN = 20;
/** How long typing pauses before a search is sent. */
const SETTLE_MS = 200;

export function Picker({
  name,
  pointer = `/${name}`,
  label,
  hint,
  multiple = false,
  value,
  known = [],
  onChange,
  search,
  empty,
  typed = false,
}: {
  /** The API's field name. */
  name: string;
  /** JSON Pointer of the field in the request body; its errors are said below. */
  pointer?: string;
  label: string;
  hint?: string;
  multiple?: boolean;
  /** The ids chosen. */
  value: string[];
  /** Choices already known (names of the ids chosen, before any search). */
  known?: Choice[];
  onChange: (ids: string[], chosen: Choice[]) => void;
  /** The choices whose name (or detail) holds `query`; all of them (or the first) for an empty one. */
  search: (query: string) => Promise<Choice[]>;
  /** What the field means when nothing is chosen ("Any page"). */
  empty?: string;
  /** What is typed may be chosen as it is (a value, not an id: a button's purpose no page has yet). */
  typed?: boolean;
}) {
  const id = useId();
  const listId = `${id}-list`;
  const [query, setQuery] = useState('');
  const [open, setOpen] = useState(false);
  const [found, setFound] = useState<Choice[]>([]);
  const [problem, setProblem] = useState<string>();
  const [active, setActive] = useState(0);
  const seen = useRef(new Map<string, Choice>());
  for (const c of known) seen.current.set(c.id, c);
  const messages = useProblems(pointer);

  useEffect(() => {
    if (!open) return;
    let live = true;
    const timer = setTimeout(async () => {
      try {
        const got = await search(query.trim());
        if (!live) return;
        for (const c of got) seen.current.set(c.id, c);
        const text = query.trim();
        const asTyped = typed && text !== '' && !got.some((c) => c.id === text) ? [{ id: text, name: text, detail: 'as typed' }] : [];
        setFound([...got.slice(0, SHOWN), ...asTyped]);
        setProblem(undefined);
        setActive(0);
      } catch (err) {
        if (live) setProblem(messageOf(err));
      }
    }, SETTLE_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [query, open]);

  const chosen = value.map((v) => seen.current.get(v) ?? { id: v, name: v });
  const emit = (ids: string[]) =>
    onChange(
      ids,
      ids.map((v) => seen.current.get(v) ?? { id: v, name: v }),
    );
  const pick = (choice: Choice) => {
    seen.current.set(choice.id, choice);
    if (multiple) emit(value.includes(choice.id) ? value : [...value, choice.id]);
    else emit([choice.id]);
    setQuery('');
    setOpen(multiple);
  };
  const drop = (gone: string) => emit(value.filter((v) => v !== gone));
  const keyDown = (e: KeyboardEvent) => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      setOpen(true);
      const step = e.key === 'ArrowDown' ? 1 : -1;
      setActive((a) => (found.length === 0 ? 0 : (a + step + found.length) % found.length));
    } else if (e.key === 'Enter' && open) {
      // Enter picks: it never submits the form around.
      e.preventDefault();
      const choice = found[active];
      if (choice) pick(choice);
    } else if (e.key === 'Escape') setOpen(false);
  };
  const ids = chosen.map((c) => c.id).join(', ');
  const hintText = [hint, ids ? `API ${chosen.length === 1 ? 'id' : 'ids'}: ${ids}` : ''].filter(Boolean).join('. ');
  const described = [`${id}-chosen`, hintText ? `${id}-hint` : '', messages.length ? `${id}-error` : ''].filter(Boolean).join(' ');
  const optionId = (i: number) => `${id}-option-${i}`;
  return (
    <div class="field picker" data-picker={name}>
      <label for={id}>{label}</label>
      <p id={`${id}-chosen`} class="chosen small">
        {chosen.length === 0 ? (
          <span class="muted">{empty ?? 'Nothing chosen'}</span>
        ) : (
          chosen.map((c) => (
            <span key={c.id} class="chip" data-chosen={c.id}>
              {c.name}
              <button type="button" class="link" aria-label={`Remove ${c.name}`} onClick={() => drop(c.id)}>
                ×
              </button>
            </span>
          ))
        )}
      </p>
      <input
        id={id}
        type="text"
        role="combobox"
        name={name}
        data-pointer={pointer}
        autocomplete="off"
        placeholder="Type to search by name"
        aria-autocomplete="list"
        aria-expanded={open}
        aria-controls={listId}
        aria-activedescendant={open && found[active] ? optionId(active) : undefined}
        aria-invalid={messages.length > 0 ? 'true' : undefined}
        aria-describedby={described}
        value={query}
        onInput={(e) => {
          setQuery(e.currentTarget.value);
          setOpen(true);
        }}
        onFocus={() => setOpen(true)}
        onBlur={() => setOpen(false)}
        onKeyDown={keyDown}
      />
      {open && (
        <div id={listId} role="listbox" class="picker-list" aria-label={`${label}: matches`}>
          {found.length === 0 && (
            <div role="option" tabIndex={-1} aria-selected={false} aria-disabled="true" class="muted">
              {problem ?? (query ? `Nothing named like “${query}”` : 'Nothing to choose yet')}
            </div>
          )}
          {found.map((c, i) => (
            <div
              key={c.id}
              tabIndex={-1}
              id={optionId(i)}
              role="option"
              aria-selected={value.includes(c.id)}
              class={i === active ? 'active' : undefined}
              onMouseDown={(e) => e.preventDefault()}
              onClick={() => pick(c)}
              onKeyDown={(e) => e.key === 'Enter' && pick(c)}
            >
              {c.name}
              {c.detail && <span class="muted small"> · {c.detail}</span>}
            </div>
          ))}
        </div>
      )}
      <FieldNotes id={id} hint={hintText} messages={messages} />
    </div>
  );
}

/** A search over a list read once (the API has no name search for it): by name or detail, case-insensitive. */
export function searchLoaded(load: () => Promise<Choice[]>): (query: string) => Promise<Choice[]> {
  let all: Promise<Choice[]> | undefined;
  return async (query) => {
    all ??= load().catch((err: unknown) => {
      all = undefined;
      throw err;
    });
    const q = query.toLowerCase();
    return (await all).filter((c) => c.name.toLowerCase().includes(q) || (c.detail ?? '').toLowerCase().includes(q));
  };
}
