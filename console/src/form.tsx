import { type ComponentChildren, createContext } from 'preact';
import { useContext, useId, useState } from 'preact/hooks';
import { ApiError, type FieldProblem } from './api.js';
import { Failure, READ_ONLY_REASON, useBusy, useSession } from './components.js';

// The one form of the console: every write form is an ApiForm, so the API's problem details
// appear once, the same way everywhere: each field shows the errors at its own JSON Pointer
// (and below it), and the problem's detail is announced under the form. Fields are labelled in
// plain words ("Page name", "What the page is for"); the API's name goes in the hint where it
// helps someone who also uses the API, and `name` and the pointer stay the API's.

const Problems = createContext<FieldProblem[]>([]);

/** The API's field errors at `pointer` or inside it (`/actions` shows `/actions/0/url` too). */
export function useProblems(pointer: string): string[] {
  const problems = useContext(Problems);
  return problems.filter((p) => p.path === pointer || p.path.startsWith(`${pointer}/`)).map((p) => p.message);
}

/** The API's field errors at exactly `pointer` (a whole item: `/actions/0`), for an item that is no one field. */
export function useExactProblems(pointer: string): string[] {
  return useContext(Problems)
    .filter((p) => p.path === pointer)
    .map((p) => p.message);
}

export function ApiForm({
  label,
  submitLabel = 'Save',
  onSubmit,
  children,
  notice,
  also,
}: {
  /** The form's accessible name. */
  label: string;
  submitLabel?: string;
  /** Sends the request; what it resolves to is said in the form's live region (`notice`). */
  onSubmit: () => Promise<unknown>;
  children: ComponentChildren;
  notice?: string;
  /** A second submit button ("Publish" beside "Save"): the same fields, another request, its own notice. */
  also?: { label: string; onSubmit: () => Promise<unknown>; notice: string; confirm?: string };
}) {
  const { readOnly } = useSession();
  const [problems, setProblems] = useState<FieldProblem[]>([]);
  const [done, setDone] = useState('');
  const { busy, error, run } = useBusy();
  const reasonId = useId();
  const submit = async (e: Event) => {
    e.preventDefault();
    if (readOnly) return;
    const second = also !== undefined && (e as SubmitEvent).submitter?.hasAttribute('data-also') === true;
    if (second && also.confirm !== undefined && !window.confirm(also.confirm)) return;
    setProblems([]);
    setDone('');
    const sent = await run(async () => {
      try {
        await (second ? also.onSubmit() : onSubmit());
      } catch (err) {
        // The fields the API named, beside the form's one failure line (useBusy's).
        setProblems(err instanceof ApiError ? err.errors : []);
        throw err;
      }
    });
    if (sent) setDone(second ? also.notice : (notice ?? 'Saved.'));
  };
  return (
    <Problems.Provider value={problems}>
      <form class="api-form" aria-label={label} onSubmit={submit} noValidate>
        <fieldset disabled={readOnly || busy} aria-describedby={readOnly ? reasonId : undefined}>
          {children}
        </fieldset>
        <p class="form-actions">
          <button
            type="submit"
            class="primary"
            data-write=""
            disabled={readOnly || busy}
            aria-busy={busy}
            aria-describedby={readOnly ? reasonId : undefined}
            title={readOnly ? READ_ONLY_REASON : undefined}
          >
            {submitLabel}
          </button>
          {also && (
            <button
              type="submit"
              class="primary"
              data-write=""
              data-also=""
              disabled={readOnly || busy}
              title={readOnly ? READ_ONLY_REASON : undefined}
            >
              {also.label}
            </button>
          )}
          {readOnly && (
            <span id={reasonId} class="muted small">
              {READ_ONLY_REASON}.
            </span>
          )}
          <output aria-live="polite">{done}</output>
        </p>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
      </form>
    </Problems.Provider>
  );
}

type FieldProps = {
  /** The API's field name (the control's `name`); the label unless `label` gives words for it. */
  name: string;
  /** JSON Pointer of the field in the request body; `/<name>` unless given. */
  pointer?: string;
  label?: string;
  value: string;
  onInput: (value: string) => void;
  hint?: string;
  required?: boolean;
  maxLength?: number;
} & (
  | { kind?: 'text' | 'email' | 'url' | 'tel' | 'search' | 'number' | 'password' }
  | { kind: 'textarea'; rows?: number }
  | { kind: 'select'; options: readonly (string | [string, string])[] }
);

/** One labelled field, with the API's errors at its pointer said below it and tied to it. */
export function Field(props: FieldProps) {
  const { name, pointer = `/${name}`, label = name, value, onInput, hint, required, maxLength } = props;
  const id = useId();
  const messages = useProblems(pointer);
  const described = [hint ? `${id}-hint` : '', messages.length ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  const common = {
    id,
    name,
    'aria-invalid': messages.length > 0 ? ('true' as const) : undefined,
    'aria-describedby': described,
    'data-pointer': pointer,
    required,
  };
  let control: ComponentChildren;
  if (props.kind === 'textarea')
    control = (
      <textarea {...common} rows={props.rows ?? 4} maxLength={maxLength} value={value} onInput={(e) => onInput(e.currentTarget.value)} />
    );
  else if (props.kind === 'select')
    control = (
      <select {...common} value={value} onChange={(e) => onInput(e.currentTarget.value)}>
        {props.options.map((o) => {
          const [v, text] = typeof o === 'string' ? [o, o] : o;
          return (
            <option key={v} value={v}>
              {text}
            </option>
          );
        })}
      </select>
    );
  else
    control = (
      <input
        {...common}
        type={(props.kind ?? 'text') as 'text'}
        maxLength={maxLength}
        value={value}
        onInput={(e) => onInput(e.currentTarget.value)}
      />
    );
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {control}
      <FieldNotes id={id} hint={hint} messages={messages} />
    </div>
  );
}

/** Below a field: its hint (`<id>-hint`) and the API's errors at its pointer (`<id>-error`), which `aria-describedby` names. */
export function FieldNotes({ id, hint, messages }: { id: string; hint: string | undefined; messages: string[] }) {
  return (
    <>
      {hint && (
        <span id={`${id}-hint`} class="muted small">
          {hint}
        </span>
      )}
      {messages.length > 0 && (
        <span id={`${id}-error`} class="error field-error">
          {messages.join('; ')}
        </span>
      )}
    </>
  );
}

/** A destructive action confirmed by typing a word (a person's name, before erasure). */
export function TypedConfirm({
  word,
  label,
  action,
  done,
}: {
  word: string;
  label: string;
  action: () => Promise<unknown>;
  done: () => void;
}) {
  const { readOnly } = useSession();
  const [typed, setTyped] = useState('');
  const { busy, error, run } = useBusy();
  const id = useId();
  const click = async () => {
    if (await run(action)) done();
  };
  return (
    <div class="typed-confirm">
      <label for={id}>Type “{word}” to confirm</label>
      <input id={id} value={typed} disabled={readOnly} autocomplete="off" onInput={(e) => setTyped(e.currentTarget.value)} />
      <button
        type="button"
        class="danger"
        data-write=""
        disabled={readOnly || busy || typed !== word}
        title={readOnly ? READ_ONLY_REASON : undefined}
        onClick={click}
      >
        {label}
      </button>
      <Failure text={error} />
    </div>
  );
}

/** A button that opens a write form ("New page", "New audience"): disabled for a read-only key, with the reason. */
export function OpenButton({ label, onClick }: { label: string; onClick: () => void }) {
  const { readOnly } = useSession();
  return (
    <p>
      <button
        type="button"
        class="primary"
        data-write=""
        disabled={readOnly}
        title={readOnly ? READ_ONLY_REASON : undefined}
        onClick={onClick}
      >
        {label}
      </button>
      {readOnly && <span class="muted small"> {READ_ONLY_REASON}.</span>}
    </p>
  );
}
