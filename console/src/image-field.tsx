import { useId } from 'preact/hooks';
import type { Asset } from './api.js';
import { IMAGE_TYPES, imageChoice } from './choices.js';
import { Picker } from './picker.js';

/**
 * One image of the tenant's, picked by name from `images` (the one list useImages reads): a
 * logo, a tab icon, a link preview's image, a section's image, the original of a variant. An id
 * the list does not hold stays chosen, shown by its id.
 */
export function ImageField({
  name,
  label,
  value,
  onInput,
  images,
  pointer,
  hint,
  empty = 'No image',
}: {
  name: string;
  label: string;
  value: string;
  onInput: (assetId: string) => void;
  images: Asset[] | undefined;
  pointer?: string;
  hint?: string;
  empty?: string;
}) {
  const known = (images ?? []).map(imageChoice);
  const search = async (query: string) => {
    const q = query.toLowerCase();
    return known.filter((c) => c.name.toLowerCase().includes(q) || (c.detail ?? '').toLowerCase().includes(q));
  };
  return (
    <Picker
      name={name}
      label={label}
      {...(pointer ? { pointer } : {})}
      {...(hint ? { hint } : {})}
      empty={empty}
      value={value ? [value] : []}
      known={known}
      onChange={(ids) => onInput(ids[ids.length - 1] ?? '')}
      search={search}
    />
  );
}

/**
 * A file input for one image (the types the API takes): the Assets view's upload form and the
 * block editor's upload in place (both then call uploadImage). `errors` are said beside it, as an
 * alert when `alert` (an upload that runs at once has no form to say it).
 */
export function ImageFileInput({
  label,
  name,
  onFile,
  busy = false,
  errors,
  alert = false,
}: {
  label: string;
  name?: string;
  onFile: (file: File | undefined) => void;
  busy?: boolean;
  errors: readonly string[];
  alert?: boolean;
}) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        {...(name ? { name } : {})}
        type="file"
        accept={IMAGE_TYPES}
        aria-busy={busy}
        onChange={(e) => onFile(e.currentTarget.files?.[0])}
      />
      {busy && <span class="muted small">Uploading…</span>}
      {errors.length > 0 && (
        <span {...(alert ? { role: 'alert' } : {})} class="error field-error">
          {errors.join('; ')}
        </span>
      )}
    </div>
  );
}
