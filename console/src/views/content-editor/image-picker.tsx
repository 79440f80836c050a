import { type ComponentChildren, createContext } from 'preact';
import { useContext, useId, useState } from 'preact/hooks';
import { type Asset, api, must, once } from '../../api.js';
import { messageOf, useLoad } from '../../components.js';
import { Field } from '../../form.js';

// An image of a section or an item: one of the tenant's assets, chosen from a list, or a file
// uploaded in place (POST /v0/files, then POST /v0/assets, as the Assets view does), which is then
// chosen. The list is loaded once per editor and shared by its pickers.

const IMAGE_TYPES = 'image/png,image/jpeg,image/gif,image/webp';

interface Library {
  assets: Asset[];
  added: (asset: Asset) => void;
}
const Assets = createContext<Library>({ assets: [], added: () => undefined });

/** The tenant's images (the newest 100) for the pickers inside. */
export function AssetLibrary({ children }: { children: ComponentChildren }) {
  const loaded = useLoad(async () => must(await api.GET('/v0/assets', { params: { query: { limit: 100 } } })).items, []);
  const [uploaded, setUploaded] = useState<Asset[]>([]);
  const listed = loaded.data ?? [];
  // Every asset is an image (the API's only asset type).
  const assets = [...uploaded.filter((u) => !listed.some((a) => a.assetId === u.assetId)), ...listed];
  return <Assets.Provider value={{ assets, added: (a) => setUploaded((prev) => [a, ...prev]) }}>{children}</Assets.Provider>;
}

async function upload(file: File): Promise<Asset> {
  const stored = must(
    await api.POST('/v0/files', {
      params: { header: once() },
      body: file as never,
      bodySerializer: (body: unknown) => body as Blob,
      headers: { 'content-type': file.type },
    }),
  );
  return must(
    await api.POST('/v0/assets', {
      params: { header: once() },
      body: { assetType: 'image', name: file.name.replace(/\.[a-z0-9]+$/i, ''), purpose: 'page image', fileId: stored.fileId },
    }),
  );
}

export function ImagePicker({
  value,
  onInput,
  pointer,
  label = 'Image',
}: {
  value: string;
  onInput: (assetId: string) => void;
  pointer: string;
  label?: string;
}) {
  const { assets, added } = useContext(Assets);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const id = useId();
  const chosen = assets.find((a) => a.assetId === value);
  // An id the list does not hold (older than the newest 100) stays chosen, shown by its id.
  const options: [string, string][] = [
    ['', '(no image)'],
    ...(value && !chosen ? [[value, value] as [string, string]] : []),
    ...assets.map((a): [string, string] => [a.assetId, a.name]),
  ];
  const picked = async (file: File | undefined) => {
    if (!file) return;
    setBusy(true);
    setError(undefined);
    try {
      const asset = await upload(file);
      added(asset);
      onInput(asset.assetId);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="image-picker">
      <Field kind="select" name="imageAssetId" label={label} pointer={pointer} value={value} onInput={onInput} options={options} />
      <div class="field">
        <label for={id}>Upload an image</label>
        <input id={id} type="file" accept={IMAGE_TYPES} aria-busy={busy} onChange={(e) => void picked(e.currentTarget.files?.[0])} />
        {busy && <span class="muted small">Uploading…</span>}
        {error && (
          <span role="alert" class="error field-error">
            {error}
          </span>
        )}
      </div>
      {chosen?.previewDownloadUrl && <img class="thumb" src={chosen.previewDownloadUrl} alt="" />}
    </div>
  );
}
