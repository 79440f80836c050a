import { useState } from 'preact/hooks';
import { type Asset, api, succeeded } from '../api.js';
import { readImagePage, uploadImage } from '../choices.js';
import { LoadMore, Section, Status, useCursorList, When, WriteButton } from '../components.js';
import { ApiForm, Field, useProblems } from '../form.js';
import { ImageField, ImageFileInput } from '../image-field.js';

// Assets: upload an image (uploadImage: its bytes, then the asset) and see each
// asset's variants: its original, its preview, and the assets made from it (its children).

/** Inside the form: the API's refusal of the file (at /fileId) is said beside it. */
function FileInput({ onFile }: { onFile: (file: File | undefined) => void }) {
  return <ImageFileInput label="file" name="file" onFile={onFile} errors={useProblems('/fileId')} />;
}

function Variants({ asset }: { asset: Asset }) {
  const children = useCursorList((cursor) => readImagePage({ parentAssetId: asset.assetId, limit: 20 }, cursor), [asset.assetId]);
  return (
    <ul class="variants" aria-label={`Variants of ${asset.name}`}>
      {asset.downloadUrl && (
        <li>
          <a href={asset.downloadUrl}>original</a>
        </li>
      )}
      {asset.previewDownloadUrl && (
        <li>
          <a href={asset.previewDownloadUrl}>preview (320 px)</a>
        </li>
      )}
      {children.items.map((c) => (
        <li key={c.assetId}>{c.downloadUrl ? <a href={c.downloadUrl}>{c.name}</a> : c.name}</li>
      ))}
    </ul>
  );
}

export function AssetsView() {
  const assets = useCursorList((cursor) => readImagePage({ limit: 50 }, cursor), []);
  const [name, setName] = useState('');
  const [purpose, setPurpose] = useState('');
  const [parentAssetId, setParent] = useState('');
  const [file, setFile] = useState<File>();
  const upload = async () => {
    if (!file) throw new Error('Choose an image file first');
    await uploadImage(file, { name, purpose, parentAssetId });
    assets.reload();
  };
  return (
    <Section title="Assets">
      <ApiForm label="Upload an image" submitLabel="Upload" onSubmit={upload} notice="Uploaded.">
        <FileInput onFile={setFile} />
        <Field name="name" label="Image name" value={name} onInput={setName} maxLength={255} hint="Empty: the file's name" />
        <Field
          name="purpose"
          label="What it is for"
          value={purpose}
          onInput={setPurpose}
          maxLength={255}
          hint="Optional, like hero or logo"
        />
        <ImageField
          name="parentAssetId"
          label="A variant of"
          value={parentAssetId}
          onInput={setParent}
          images={assets.items}
          empty="Nothing: an original"
        />
      </ApiForm>
      <Status loaded={assets}>
        {assets.items.length === 0 ? (
          <p>No assets yet.</p>
        ) : (
          <ul class="cards">
            {assets.items.map((a) => (
              <li key={a.assetId} data-asset={a.assetId}>
                {a.previewDownloadUrl && <img src={a.previewDownloadUrl} alt={a.name} class="thumb" loading="lazy" />}
                <h3>{a.name}</h3>
                <p class="muted small">
                  {a.purpose || 'No purpose given'} · added <When at={a.createdAt} />
                </p>
                <Variants asset={a} />
                <WriteButton
                  label="Delete"
                  name={`Delete asset ${a.name}`}
                  kind="danger"
                  confirm={`Delete the asset ${a.name}?`}
                  action={async () => succeeded(await api.DELETE('/v0/assets/{asset_id}', { params: { path: { asset_id: a.assetId } } }))}
                  done={assets.reload}
                />
              </li>
            ))}
          </ul>
        )}
        <LoadMore list={assets} />
      </Status>
    </Section>
  );
}
