import { useEffect, useRef, useState } from 'preact/hooks';
import type { PageContent } from '../../api.js';
import { ApiForm, Field } from '../../form.js';
import { type Block, type Draft, emptyBlock, fromContent, moved, toContent } from './blocks.js';
import { AssetLibrary } from './image-picker.js';
import { type ActionChoice, SectionFields } from './section.js';
import './editor.css';

// The block editor of a page's content or of an audience's version: a headline, a subheadline and
// sections in any layout, added, reordered and removed, then saved or published. What Save and
// Publish send is the caller's (the page, a draft version, a new version).

/** The tokens the served page fills (src/render/content.ts), listed above the editor: the person's, then the visit's. */
export const TOKENS = ['{{person.name}}', '{{person.firstName | there}}', '{{account.name}}', '{{audience.name}}'];
export const VISIT_TOKENS = [
  '{{utm.source}}',
  '{{utm.medium}}',
  '{{utm.campaign | our offer}}',
  '{{utm.term}}',
  '{{utm.content}}',
  '{{query.<name>}}',
  '{{visitor.country}}',
  '{{company.name | your team}}',
  '{{company.industry}}',
];

export interface EditorProps {
  /** The form's accessible name. */
  label: string;
  initial: PageContent | null | undefined;
  /** The page's actions, for a call-to-action section's button. */
  actions: ActionChoice[];
  save: (content: PageContent) => Promise<unknown>;
  savedNotice?: string;
  /** Absent: no Publish button (a version that cannot be published from here). */
  publish?: { run: (content: PageContent) => Promise<unknown>; confirm: string; notice: string };
  /** Told the content after each change, not before the first: what the live preview shows. */
  onDraft?: (content: PageContent) => void;
}

export function BlockEditor({ label, initial, actions, save, savedNotice, publish, onDraft }: EditorProps) {
  const [draft, setDraft] = useState<Draft>(() => fromContent(initial));
  const first = useRef(draft);
  useEffect(() => {
    if (draft !== first.current) onDraft?.(toContent(draft));
  }, [draft]);
  const [focus, setFocus] = useState<{ key: number; selectors: string[] }>();
  const list = useRef<HTMLDivElement>(null);
  // A new section's Layout is focused, so the keyboard lands where the next choice is made; a
  // moved section keeps the focus on its move button (moving its element in the DOM drops it).
  useEffect(() => {
    if (focus === undefined) return;
    for (const selector of focus.selectors) {
      const found = list.current?.querySelector<HTMLElement>(`[data-key="${focus.key}"] > fieldset > ${selector}`);
      if (found && !(found as HTMLButtonElement).disabled) {
        found.focus();
        break;
      }
    }
    setFocus(undefined);
  }, [focus]);
  const setBlocks = (blocks: Block[]) => setDraft((d) => ({ ...d, blocks }));
  const { blocks } = draft;
  const add = () => {
    const block = emptyBlock();
    setBlocks([...blocks, block]);
    setFocus({ key: block.key, selectors: ['.field select'] });
  };
  return (
    <AssetLibrary>
      <ApiForm
        label={label}
        onSubmit={() => save(toContent(draft))}
        notice={savedNotice}
        also={
          publish && { label: 'Publish', confirm: publish.confirm, notice: publish.notice, onSubmit: () => publish.run(toContent(draft)) }
        }
      >
        <p class="muted small" data-tokens="person">
          Words filled in for each person:{' '}
          {TOKENS.map((t) => (
            <code key={t}>{t} </code>
          ))}
        </p>
        <p class="muted small" data-tokens="visit">
          And from each visit (its link, country and company; after | what shows when it does not say):{' '}
          {VISIT_TOKENS.map((t) => (
            <code key={t}>{t} </code>
          ))}
        </p>
        <Field
          name="headline"
          label="Headline"
          pointer="/content/headline"
          value={draft.headline}
          onInput={(headline) => setDraft((d) => ({ ...d, headline }))}
          maxLength={200}
        />
        <Field
          name="subheadline"
          label="Subheadline"
          pointer="/content/subheadline"
          value={draft.subheadline}
          onInput={(subheadline) => setDraft((d) => ({ ...d, subheadline }))}
          maxLength={500}
        />
        <div class="blocks" ref={list}>
          {blocks.length === 0 && <p class="muted">No sections yet: the page shows its headline and its buttons.</p>}
          {blocks.map((b, i) => (
            <div key={b.key} data-key={b.key}>
              <SectionFields
                block={b}
                index={i}
                count={blocks.length}
                actions={actions}
                onChange={(patch) => setBlocks(blocks.map((x) => (x.key === b.key ? { ...x, ...patch } : x)))}
                onMove={(to) => {
                  setBlocks(moved(blocks, i, to));
                  const [first, second] = to < i ? ['up', 'down'] : ['down', 'up'];
                  setFocus({ key: b.key, selectors: [`.actions [data-move="${first}"]`, `.actions [data-move="${second}"]`] });
                }}
                onRemove={() => setBlocks(blocks.filter((x) => x.key !== b.key))}
              />
            </div>
          ))}
        </div>
        <button type="button" class="secondary" onClick={add}>
          Add section
        </button>
      </ApiForm>
    </AssetLibrary>
  );
}
