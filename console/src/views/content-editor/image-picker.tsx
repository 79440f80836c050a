import { type ComponentChildren, createContext } from 'preact';
import { useContext, useState } from 'preact/hooks';
import type { Asset } from '../../api.js';
import { uploadImage, useImages } from '../../choices.js';
import { useBusy } from '../../components.js';
import { ImageField, ImageFileInput } from '../../image-field.js';

// An image of a section or an item: one of the tenant's assets, chosen from a list, or a file
// uploaded in place (uploadImage, as the Assets view does), which is then chosen. The list is
// loaded once per editor and shared by its pickers.

interface Library {
  assets: Asset[];
  added: (asset: Asset) => void;
}
const Assets = createContext<Library>({ assets: [], added: () => undefined });

/** The tenant's images for the pickers inside, read once (useImages), with those uploaded since. */
export function AssetLibrary({ children }: { children: ComponentChildren }) {
  const loaded = useImages();
  const [uploaded, setUploaded] = useState<Asset[]>([]);
  const listed = loaded.data ?? [];
  const assets = [...uploaded.filter((u) => !listed.some((a) => a.assetId === u.assetId)), ...listed];
  return <Assets.Provider value={{ assets, added: (a) => setUploaded((prev) => [a, ...prev]) }}>{children}</Assets.Provider>;
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
  const upload = useBusy();
  const chosen = assets.find((a) => a.assetId === value);
  const picked = (file: File | undefined) =>
    file &&
    upload.run(async () => {
      const asset = await uploadImage(file, { purpose: 'page image' });
      added(asset);
      onInput(asset.assetId);
    });
  return (
    <div class="image-picker">
      <ImageField name="imageAssetId" label={label} pointer={pointer} value={value} onInput={onInput} images={assets} />
      <ImageFileInput
        label="Upload an image"
        onFile={(file) => void picked(file)}
        busy={upload.busy}
        errors={upload.error ? [upload.error] : []}
        alert
      />
      {chosen?.previewDownloadUrl && <img class="thumb" src={chosen.previewDownloadUrl} alt="" />}
    </div>
  );
}
