import { useState } from 'preact/hooks';
import { Failure } from '../components.js';
import { Field, useExactProblems } from '../form.js';
import { type ApiSection, type Block, emptyBlock, fromSection, newKey, toSection } from './content-editor/blocks.js';
import { VISIT_TOKENS } from './content-editor/editor.js';
import { AssetLibrary } from './content-editor/image-picker.js';
import { SectionFields } from './content-editor/section.js';
import { ATTRIBUTES, CHANGE_ACTIONS, type Change, type ChangeAction } from './onsite-api.js';
import type { PickState } from './onsite-tools.js';

type Attribute = NonNullable<Change['attribute']>;

// An experience's changes (issue 48): 1–50, each a CSS selector and what to do to the element it
// finds: replace its text, set one attribute, hide it, or insert a section (edited with the page
// editor's own section fields) before or after it. Pointers are the request's
// (`/changes/{i}/selector`), so the API's refusals show at the field they are about.

export const MAX_CHANGES = 50;

/** A change as the editor holds it: every action's fields kept, so switching action loses nothing typed. */
export interface ChangeRow {
  key: number;
  selector: string;
  action: ChangeAction;
  text: string;
  attribute: Attribute;
  attributeValue: string;
  placement: 'before' | 'after';
  block: Block;
}

const ACTION_WORDS: Record<ChangeAction, string> = {
  text: 'Replace its text',
  attribute: 'Set an attribute',
  hide: 'Hide it',
  section: 'Insert a section next to it',
};

export const emptyChange = (): ChangeRow => ({
  key: newKey(),
  selector: '',
  action: 'text',
  text: '',
  attribute: 'href',
  attributeValue: '',
  placement: 'after',
  block: emptyBlock(),
});

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

export function toRow(change: Change): ChangeRow {
  const row = { ...emptyChange(), selector: change.selector, action: change.action };
  if (change.action === 'text') row.text = text(change.value);
  if (change.action === 'attribute') Object.assign(row, { attribute: change.attribute ?? 'href', attributeValue: text(change.value) });
  if (change.action === 'section') {
    row.placement = change.placement ?? 'after';
    if (typeof change.value === 'object' && change.value !== null) row.block = fromSection(change.value as ApiSection);
  }
  return row;
}

/** The change the API takes: only its action's fields. */
export function toChange(row: ChangeRow): Change {
  const selector = row.selector.trim();
  switch (row.action) {
    case 'text':
      return { selector, action: 'text', value: row.text };
    case 'attribute':
      return { selector, action: 'attribute', attribute: row.attribute, value: row.attributeValue };
    case 'hide':
      return { selector, action: 'hide' };
    case 'section':
      return { selector, action: 'section', placement: row.placement, value: toSection(row.block) };
  }
}

function ChangeFields({
  row,
  index,
  count,
  pick,
  onChange,
  onRemove,
}: {
  row: ChangeRow;
  index: number;
  count: number;
  pick: { state: PickState; start: (key: number) => void } | undefined;
  onChange: (patch: Partial<ChangeRow>) => void;
  onRemove: () => void;
}) {
  const at = `/changes/${index}`;
  const whole = useExactProblems(at);
  const waiting = pick?.state.waitingFor === row.key;
  return (
    <fieldset class="item change" data-change={index}>
      <legend>Change {index + 1}</legend>
      {whole.length > 0 && <p class="error field-error">{whole.join('; ')}</p>}
      <div class="controls">
        <Field
          name="selector"
          label="Element (CSS selector)"
          pointer={`${at}/selector`}
          value={row.selector}
          maxLength={500}
          onInput={(selector) => onChange({ selector })}
          hint="Like #hero h1 or .pricing .cta: Pick an element finds it for you"
        />
        {pick && (
          <button
            type="button"
            class="secondary"
            aria-label={`Pick an element for change ${index + 1}`}
            aria-busy={waiting}
            onClick={() => (waiting ? pick.state.stop() : pick.start(row.key))}
          >
            {waiting ? 'Stop picking' : 'Pick an element'}
          </button>
        )}
      </div>
      {waiting && (
        <p class="muted small" aria-live="polite">
          Click the element on the page in the new tab: its selector comes back here.
        </p>
      )}
      <Field
        kind="select"
        name="action"
        label="What to do"
        pointer={`${at}/action`}
        value={row.action}
        onInput={(v) => onChange({ action: v as ChangeAction })}
        options={CHANGE_ACTIONS.map((a): [string, string] => [a, ACTION_WORDS[a]])}
      />
      {row.action === 'text' && (
        <Field
          kind="textarea"
          name="value"
          label="New text"
          pointer={`${at}/value`}
          value={row.text}
          rows={2}
          onInput={(v) => onChange({ text: v })}
          hint={`Always shown as text. Words from the visit: ${VISIT_TOKENS.join(' ')}`}
        />
      )}
      {row.action === 'attribute' && (
        <div class="controls">
          <Field
            kind="select"
            name="attribute"
            label="Attribute"
            pointer={`${at}/attribute`}
            value={row.attribute}
            onInput={(attribute) => onChange({ attribute: attribute as Attribute })}
            options={ATTRIBUTES}
          />
          <Field
            name="value"
            label="New value"
            pointer={`${at}/value`}
            value={row.attributeValue}
            onInput={(attributeValue) => onChange({ attributeValue })}
            hint={row.attribute === 'href' || row.attribute === 'src' ? 'An https:// address or a path like /pricing' : undefined}
          />
        </div>
      )}
      {row.action === 'section' && (
        <>
          <Field
            kind="select"
            name="placement"
            label="Where"
            pointer={`${at}/placement`}
            value={row.placement}
            onInput={(v) => onChange({ placement: v as 'before' | 'after' })}
            options={[
              ['before', 'Before the element'],
              ['after', 'After the element'],
            ]}
          />
          <SectionFields
            block={row.block}
            index={0}
            count={1}
            actions={[]}
            at={`${at}/value`}
            legend="The section to insert (in your brand)"
            without={['cta']}
            onChange={(patch) => onChange({ block: { ...row.block, ...patch } })}
          />
        </>
      )}
      {count > 1 && (
        <div class="actions">
          <button type="button" class="danger" aria-label={`Remove change ${index + 1}`} onClick={onRemove}>
            Remove change
          </button>
        </div>
      )}
    </fieldset>
  );
}

/** The changes of one experience; `pick` absent when the site has no origin to open (never, as origins are required). */
export function ChangesEditor({
  rows,
  setRows,
  pick,
}: {
  rows: ChangeRow[];
  setRows: (update: (rows: ChangeRow[]) => ChangeRow[]) => void;
  pick: { state: PickState; start: (key: number) => void } | undefined;
}) {
  const whole = useExactProblems('/changes');
  const [focusNote, setFocusNote] = useState('');
  return (
    <AssetLibrary>
      <fieldset class="changes">
        <legend>
          Changes ({rows.length} of at most {MAX_CHANGES})
        </legend>
        {whole.length > 0 && <p class="error field-error">{whole.join('; ')}</p>}
        {rows.map((row, i) => (
          <ChangeFields
            key={row.key}
            row={row}
            index={i}
            count={rows.length}
            pick={pick}
            onChange={(patch) => setRows((all) => all.map((r) => (r.key === row.key ? { ...r, ...patch } : r)))}
            onRemove={() => {
              setRows((all) => all.filter((r) => r.key !== row.key));
              setFocusNote(`Change ${i + 1} removed.`);
            }}
          />
        ))}
        {rows.length < MAX_CHANGES && (
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setRows((all) => [...all, emptyChange()]);
              setFocusNote(`Change ${rows.length + 1} added.`);
            }}
          >
            Add change
          </button>
        )}
        <output aria-live="polite" class="sr-only">
          {focusNote}
        </output>
        <Failure text={pick?.state.error} />
      </fieldset>
    </AssetLibrary>
  );
}
