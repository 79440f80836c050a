import { Field } from '../../form.js';
import {
  BACKGROUNDS,
  type Background,
  type Block,
  emptyItem,
  HAS_IMAGE,
  ITEM_TEXTS,
  ITEMS,
  type Item,
  LAYOUTS,
  type Layout,
  layoutName,
  moved,
  VARIANTS,
  type Variant,
} from './blocks.js';
import { ImagePicker } from './image-picker.js';

// One section of the block editor: its layout, its text, and the fields its layout adds (the
// issue's table), each labelled in words; pointers are the request body's, so the API's problems
// show beside the field they are about.

export interface ActionChoice {
  actionId: string;
  buttonTitle: string;
  actionType: string;
}

/** A sketch of each layout's shape, for a glance: the cells of a small grid, by kind and columns. */
const SKETCH: Record<Layout, [number, string]> = {
  text: [1, 'ttt'],
  hero: [2, 'ti'],
  image_text: [2, 'it'],
  features: [3, 'ccc'],
  faq: [1, 'fff'],
  quote: [1, 'q'],
  logos: [4, 'llll'],
  cta: [1, 'b'],
  video: [1, 'v'],
  stats: [3, 'nnn'],
  steps: [3, 'sss'],
  testimonials: [3, 'qqq'],
  pricing: [3, 'php'],
};

function Sketch({ layout }: { layout: Layout }) {
  const [columns, cells] = SKETCH[layout];
  return (
    <figure class="sketch-figure">
      <div class={`sketch cols-${columns}`} aria-hidden="true">
        {[...cells].map((kind, i) => (
          <span key={i} class={`cell k-${kind}`} />
        ))}
      </div>
      <figcaption class="muted small">Preview: {layoutName(layout)}</figcaption>
    </figure>
  );
}

function actionOptions(actions: ActionChoice[], none: string): [string, string][] {
  return [
    ['', actions.length === 0 ? '(the page has no actions yet: add one in Settings)' : none],
    ...actions.map((a): [string, string] => [a.actionId, `${a.buttonTitle} (${a.actionType === 'form' ? 'a form' : 'a link'})`]),
  ];
}

function Items({ block, at, actions, onChange }: { block: Block; at: string; actions: ActionChoice[]; onChange: (items: Item[]) => void }) {
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
          {ITEM_TEXTS.map((key) => {
            const label = kind[key];
            if (label === undefined) return null;
            const common = {
              name: key,
              label,
              pointer: `${at}/items/${i}/${key}`,
              value: it[key],
              onInput: (v: string) => set(i, { [key]: v }),
            };
            return key === 'body' ? <Field key={key} kind="textarea" rows={3} {...common} /> : <Field key={key} {...common} />;
          })}
          {kind.image && (
            <ImagePicker pointer={`${at}/items/${i}/imageAssetId`} value={it.imageAssetId} onInput={(v) => set(i, { imageAssetId: v })} />
          )}
          {kind.action && (
            <>
              <Field
                kind="select"
                name="actionId"
                label="Button (optional)"
                pointer={`${at}/items/${i}/actionId`}
                value={it.actionId}
                onInput={(v) => set(i, { actionId: v })}
                options={actionOptions(actions, '(no button)')}
              />
              <Field
                kind="select"
                name="highlighted"
                label="Highlighted"
                pointer={`${at}/items/${i}/highlighted`}
                value={it.highlighted ? 'yes' : 'no'}
                onInput={(v) => set(i, { highlighted: v === 'yes' })}
                options={[
                  ['no', 'No'],
                  ['yes', 'Yes: the plan most people should choose (one at most)'],
                ]}
              />
            </>
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
  at = `/content/sections/${index}`,
  legend = `Section ${index + 1}`,
  without = [],
}: {
  block: Block;
  index: number;
  count: number;
  actions: ActionChoice[];
  onChange: (patch: Partial<Block>) => void;
  /** Absent (a section alone, as an onsite change inserts): no move or remove buttons. */
  onMove?: (to: number) => void;
  onRemove?: () => void;
  /** The section's JSON Pointer in the request body, where the API's problems about it are. */
  at?: string;
  legend?: string;
  /** Layouts not offered (an onsite section has no page buttons, so no call to action). */
  without?: readonly Layout[];
}) {
  const layout = block.layout;
  const setLayout = (next: Layout) =>
    onChange({ layout: next, items: ITEMS[next] && block.items.length === 0 ? [emptyItem(), emptyItem()] : block.items });
  return (
    <fieldset class="item block" data-layout={layout}>
      <legend>{legend}</legend>
      <Field
        kind="select"
        name="layout"
        label="Layout"
        pointer={`${at}/layout`}
        value={layout}
        onInput={(v) => setLayout(v as Layout)}
        options={LAYOUTS.filter(([value]) => !without.includes(value)).map(([value, text]): [string, string] => [value, text])}
      />
      <Sketch layout={layout} />
      <Field
        kind="select"
        name="background"
        label="Background"
        pointer={`${at}/background`}
        value={block.background}
        onInput={(v) => onChange({ background: v as Background })}
        options={BACKGROUNDS.map(([value, text]): [string, string] => [value, text])}
      />
      {layout === 'hero' && (
        <Field
          kind="select"
          name="variant"
          label="Arrangement"
          pointer={`${at}/variant`}
          value={block.variant}
          onInput={(v) => onChange({ variant: v as Variant })}
          options={VARIANTS.map(([value, text]): [string, string] => [value, text])}
          hint="A first section that is a hero with no heading shows the page's headline and subheadline"
        />
      )}
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
          options={actionOptions(actions, '(choose one of the page’s buttons)')}
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
      <Items block={block} at={at} actions={actions} onChange={(items) => onChange({ items })} />
      {onMove && onRemove && (
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
      )}
    </fieldset>
  );
}
