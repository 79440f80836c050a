import { Field } from '../../form.js';
import { type Block, emptyItem, HAS_IMAGE, ITEMS, type Item, LAYOUTS, type Layout, moved } from './blocks.js';
import { ImagePicker } from './image-picker.js';

// One section of the block editor: its layout, its text, and the fields its layout adds (the
// issue's table), each labelled in words; pointers are the request body's, so the API's problems
// show beside the field they are about.

export interface ActionChoice {
  actionId: string;
  buttonTitle: string;
  actionType: string;
}

function Items({ block, at, onChange }: { block: Block; at: string; onChange: (items: Item[]) => void }) {
  const kind = ITEMS[block.layout];
  if (!kind) return null;
  const set = (i: number, patch: Partial<Item>) => onChange(block.items.map((it, j) => (j === i ? { ...it, ...patch } : it)));
  const lower = kind.one.toLowerCase();
  return (
    <div class="block-items">
      {block.items.map((it, i) => (
        <fieldset key={it.key} class="item">
          <legend>
            {kind.one} {i + 1}
          </legend>
          <Field
            name="title"
            label={kind.title}
            pointer={`${at}/items/${i}/title`}
            value={it.title}
            onInput={(v) => set(i, { title: v })}
          />
          {kind.body && (
            <Field
              kind="textarea"
              name="body"
              label={kind.body}
              pointer={`${at}/items/${i}/body`}
              value={it.body}
              onInput={(v) => set(i, { body: v })}
              rows={3}
            />
          )}
          {kind.image && (
            <ImagePicker pointer={`${at}/items/${i}/imageAssetId`} value={it.imageAssetId} onInput={(v) => set(i, { imageAssetId: v })} />
          )}
          <div class="actions">
            <button type="button" class="secondary" disabled={i === 0} onClick={() => onChange(moved(block.items, i, i - 1))}>
              Move {lower} up
            </button>
            <button
              type="button"
              class="secondary"
              disabled={i === block.items.length - 1}
              onClick={() => onChange(moved(block.items, i, i + 1))}
            >
              Move {lower} down
            </button>
            <button type="button" class="secondary" onClick={() => onChange(block.items.filter((_, j) => j !== i))}>
              Remove {lower}
            </button>
          </div>
        </fieldset>
      ))}
      <button type="button" class="secondary" onClick={() => onChange([...block.items, emptyItem()])}>
        Add {lower}
      </button>
    </div>
  );
}

export function SectionFields({
  block,
  index,
  count,
  actions,
  onChange,
  onMove,
  onRemove,
}: {
  block: Block;
  index: number;
  count: number;
  actions: ActionChoice[];
  onChange: (patch: Partial<Block>) => void;
  onMove: (to: number) => void;
  onRemove: () => void;
}) {
  const at = `/content/sections/${index}`;
  const layout = block.layout;
  const setLayout = (next: Layout) =>
    onChange({ layout: next, items: ITEMS[next] && block.items.length === 0 ? [emptyItem(), emptyItem()] : block.items });
  return (
    <fieldset class="item block" data-layout={layout}>
      <legend>Section {index + 1}</legend>
      <Field
        kind="select"
        name="layout"
        label="Layout"
        pointer={`${at}/layout`}
        value={layout}
        onInput={(v) => setLayout(v as Layout)}
        options={LAYOUTS.map(([value, text]): [string, string] => [value, text])}
      />
      <Field
        name="heading"
        label="Section heading"
        pointer={`${at}/heading`}
        value={block.heading}
        onInput={(v) => onChange({ heading: v })}
      />
      <Field
        kind="textarea"
        name="body"
        label="Section text"
        pointer={`${at}/body`}
        value={block.body}
        onInput={(v) => onChange({ body: v })}
        hint="Markdown: **bold**, [a link](https://…), lists"
        rows={layout === 'text' ? 6 : 3}
      />
      {HAS_IMAGE.includes(layout) && (
        <ImagePicker pointer={`${at}/imageAssetId`} value={block.imageAssetId} onInput={(v) => onChange({ imageAssetId: v })} />
      )}
      {(layout === 'hero' || layout === 'image_text') && (
        <Field
          name="imageAlt"
          label="What the image shows"
          pointer={`${at}/imageAlt`}
          value={block.imageAlt}
          onInput={(v) => onChange({ imageAlt: v })}
          hint="Read aloud to people who cannot see it (alt text); empty for a decorative image"
        />
      )}
      {layout === 'image_text' && (
        <Field
          kind="select"
          name="imageSide"
          label="Image side"
          pointer={`${at}/imageSide`}
          value={block.imageSide}
          onInput={(v) => onChange({ imageSide: v as 'left' | 'right' })}
          options={[
            ['left', 'Left of the text'],
            ['right', 'Right of the text'],
          ]}
        />
      )}
      {layout === 'quote' && (
        <>
          <Field name="author" label="Who said it" pointer={`${at}/author`} value={block.author} onInput={(v) => onChange({ author: v })} />
          <Field name="role" label="Their role" pointer={`${at}/role`} value={block.role} onInput={(v) => onChange({ role: v })} />
        </>
      )}
      {layout === 'cta' && (
        <Field
          kind="select"
          name="actionId"
          label="Button"
          pointer={`${at}/actionId`}
          value={block.actionId}
          onInput={(v) => onChange({ actionId: v })}
          options={[
            ['', actions.length === 0 ? '(the page has no actions yet: add one in Settings)' : '(choose one of the page’s buttons)'],
            ...actions.map((a): [string, string] => [a.actionId, `${a.buttonTitle} (${a.actionType === 'form' ? 'a form' : 'a link'})`]),
          ]}
        />
      )}
      {layout === 'video' && (
        <Field
          kind="url"
          name="videoUrl"
          label="Video link"
          pointer={`${at}/videoUrl`}
          value={block.videoUrl}
          onInput={(v) => onChange({ videoUrl: v })}
          hint="A YouTube or Vimeo address; the player loads only when a visitor clicks play"
        />
      )}
      <Items block={block} at={at} onChange={(items) => onChange({ items })} />
      <div class="actions">
        <button type="button" class="secondary" data-move="up" disabled={index === 0} onClick={() => onMove(index - 1)}>
          Move up
        </button>
        <button type="button" class="secondary" data-move="down" disabled={index === count - 1} onClick={() => onMove(index + 1)}>
          Move down
        </button>
        <button type="button" class="danger" onClick={onRemove}>
          Remove section
        </button>
      </div>
    </fieldset>
  );
}
