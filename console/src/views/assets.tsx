import { useState } from 'preact/hooks';
import { type Asset, api, must, once, succeeded } from '../api.js';
import { LoadMore, Section, Status, useCursorList, When, WriteButton } from '../components.js';
import { ApiForm, Field, useProblems } from '../form.js';

// Assets: upload an image (POST /v0/files with its bytes, then POST /v0/assets) and see each
// asset's variants: its original, its preview, and the assets made from it (its children).

const IMAGE_TYPES = 'image/png,image/jpeg,image/gif,image/webp';

function FileInput({ onFile }: { onFile: (file: File | undefined) => void }) {
  const messages = useProblems('/fileId');
  return (
    <div class="field">
      <label for="asset-file">file</label>
      <input id="asset-file" name="file" type="file" accept={IMAGE_TYPES} onChange={(e) => onFile(e.currentTarget.files?.[0])} />
      {messages.length > 0 && <span class="error field-error">{messages.join('; ')}</span>}
    </div>
  );
}

function Variants({ asset }: { asset: Asset }) {
  const children = useCursorList(
    async (cursor) =>
      must(await api.GET('/v0/assets', { params: { query: { parentAssetId: asset.assetId, limit: 20, ...(cursor ? { cursor } : {}) } } })),
    [asset.assetId],
  );
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
  const assets = useCursorList(
    async (cursor) => must(await api.GET('/v0/assets', { params: { query: { limit: 50, ...(cursor ? { cursor } : {}) } } })),
    [],
  );
  const [name, setName] = useState('');
  const [purpose, setPurpose] = useState('');
  const [parentAssetId, setParent] = useState('');
  const [file, setFile] = useState<File>();
  const upload = async () => {
    if (!file) throw new Error('Choose an image file first');
    const stored = must(
      await api.POST('/v0/files', {
        params: { header: once() },
        body: file as never,
        bodySerializer: (body: unknown) => body as Blob,
        headers: { 'content-type': file.type },
      }),
    );
    must(
      await api.POST('/v0/assets', {
        params: { header: once() },
        body: { assetType: 'image', name: name || file.name, purpose, fileId: stored.fileId, ...(parentAssetId ? { parentAssetId } : {}) },
      }),
    );
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
        <Field
          kind="select"
          name="parentAssetId"
          label="A variant of"
          value={parentAssetId}
          onInput={setParent}
          options={[['', 'Nothing: an original'] as [string, string], ...assets.items.map((a): [string, string] => [a.assetId, a.name])]}
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
