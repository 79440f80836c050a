import { useState } from 'preact/hooks';
import { type Asset, api, must, once, type Page, type PageAction, type PageContent, succeeded } from '../api.js';
import { Section, useLoad, WriteButton } from '../components.js';
import { ApiForm, Field } from '../form.js';
import { href } from '../router.js';

// Writing a page: the "New page" form, its settings (actions and metadata), the content editor,
// and its status actions. Labels are the API's field names; pointers are the request body's.

const PAGE_TYPES = ['inbound', 'outbound', 'call_followup', 'sales_deck', 'custom'] as const;
type PageType = (typeof PAGE_TYPES)[number];
/** The tokens the served page fills (src/render/content.ts), listed beside the editor. */
export const TOKENS = ['{{person.name}}', '{{person.firstName | there}}', '{{account.name}}', '{{audience.name}}'];

/** The tenant's images (the first 100, newest first), for the OG image picker. */
function useAssets() {
  return useLoad(async () => must(await api.GET('/v0/assets', { params: { query: { limit: 100 } } })).items, []);
}

function OgImage({ value, onInput, assets }: { value: string; onInput: (v: string) => void; assets: Asset[] | undefined }) {
  const options: [string, string][] = [['', '(none)'], ...(assets ?? []).map((a): [string, string] => [a.assetId, a.name])];
  return (
    <Field
      kind="select"
      name="ogImageAssetId"
      pointer="/metadata/ogImageAssetId"
      value={value}
      onInput={onInput}
      options={options}
      hint="An image from Assets"
    />
  );
}

function Actions({ actions, onChange }: { actions: PageAction[]; onChange: (next: PageAction[]) => void }) {
  const set = (i: number, patch: Partial<PageAction>) => onChange(actions.map((a, j) => (j === i ? { ...a, ...patch } : a)));
  return (
    <fieldset class="group">
      <legend>actions</legend>
      {actions.map((a, i) => (
        <fieldset key={a.actionId ?? `new-${i}`} class="item">
          <legend>actions/{i}</legend>
          <Field
            kind="select"
            name="actionType"
            pointer={`/actions/${i}/actionType`}
            value={a.actionType}
            onInput={(v) => set(i, { actionType: v })}
            options={[
              ['link', 'link'],
              ['form', 'form'],
            ]}
          />
          <Field
            name="buttonTitle"
            pointer={`/actions/${i}/buttonTitle`}
            value={a.buttonTitle}
            onInput={(v) => set(i, { buttonTitle: v })}
          />
          <Field name="purpose" pointer={`/actions/${i}/purpose`} value={a.purpose} onInput={(v) => set(i, { purpose: v })} />
          {a.actionType !== 'form' && (
            <Field kind="url" name="url" pointer={`/actions/${i}/url`} value={a.url} onInput={(v) => set(i, { url: v })} />
          )}
          <button type="button" class="secondary" onClick={() => onChange(actions.filter((_, j) => j !== i))}>
            Remove action {i + 1}
          </button>
        </fieldset>
      ))}
      <button
        type="button"
        class="secondary"
        onClick={() => onChange([...actions, { actionType: 'link', buttonTitle: '', purpose: '', url: '' }])}
      >
        Add an action
      </button>
    </fieldset>
  );
}

/** A form action has no URL of its own: the served page posts to itself. */
const actionsBody = (actions: PageAction[]) => actions.map((a) => (a.actionType === 'form' ? { ...a, url: '' } : a));

export function NewPage({ onClose }: { onClose: () => void }) {
  const [name, setName] = useState('');
  const [title, setTitle] = useState('');
  const [pageType, setPageType] = useState<PageType>('inbound');
  const [pageContext, setPageContext] = useState('');
  const [actions, setActions] = useState<PageAction[]>([]);
  const [metaTitle, setMetaTitle] = useState('');
  const [metaDescription, setMetaDescription] = useState('');
  const [ogImage, setOgImage] = useState('');
  const assets = useAssets();
  const submit = async () => {
    const metadata = {
      ...(metaTitle ? { title: metaTitle } : {}),
      ...(metaDescription ? { description: metaDescription } : {}),
      ...(ogImage ? { ogImageAssetId: ogImage } : {}),
    };
    const page = must(
      await api.POST('/v0/pages', {
        params: { header: once() },
        body: { name, title, pageType, pageContext, actions: actionsBody(actions), metadata },
      }),
    );
    location.hash = href('pages', page.pageId);
  };
  return (
    <Section title="New page">
      <ApiForm label="New page" submitLabel="Create page" onSubmit={submit} notice="Created.">
        <Field name="name" value={name} onInput={setName} required maxLength={255} />
        <Field name="title" value={title} onInput={setTitle} required maxLength={255} />
        <Field kind="select" name="pageType" value={pageType} onInput={(v) => setPageType(v as PageType)} options={PAGE_TYPES} />
        <Field
          kind="textarea"
          name="pageContext"
          value={pageContext}
          onInput={setPageContext}
          hint="What the page is for: the page agent reads it"
        />
        <Actions actions={actions} onChange={setActions} />
        <fieldset class="group">
          <legend>metadata</legend>
          <Field name="title" label="metadata.title" pointer="/metadata/title" value={metaTitle} onInput={setMetaTitle} />
          <Field name="description" pointer="/metadata/description" value={metaDescription} onInput={setMetaDescription} />
          <OgImage value={ogImage} onInput={setOgImage} assets={assets.data} />
        </fieldset>
      </ApiForm>
      <button type="button" class="secondary" onClick={onClose}>
        Cancel
      </button>
    </Section>
  );
}

/** Name, type, context, actions and metadata of an existing page (PATCH: metadata is merged). */
export function PageSettings({ page, saved }: { page: Page; saved: () => void }) {
  const [name, setName] = useState(page.name);
  const [pageType, setPageType] = useState<PageType>(page.pageType);
  const [pageContext, setPageContext] = useState(page.pageContext);
  const [actions, setActions] = useState<PageAction[]>(
    page.actions.map(({ actionId, purpose, buttonTitle, actionType, url }) => ({ actionId, purpose, buttonTitle, actionType, url })),
  );
  const [ogImage, setOgImage] = useState(page.metadata?.ogImageAssetId ?? '');
  const assets = useAssets();
  const submit = async () => {
    must(
      await api.PATCH('/v0/pages/{page_id}', {
        params: { path: { page_id: page.pageId } },
        body: { name, pageType, pageContext, actions: actionsBody(actions), metadata: { ogImageAssetId: ogImage || null } },
      }),
    );
    saved();
  };
  return (
    <details class="editor">
      <summary>Settings: name, type, context, actions, metadata</summary>
      <ApiForm label="Page settings" onSubmit={submit}>
        <Field name="name" value={name} onInput={setName} required maxLength={255} />
        <Field kind="select" name="pageType" value={pageType} onInput={(v) => setPageType(v as PageType)} options={PAGE_TYPES} />
        <Field kind="textarea" name="pageContext" value={pageContext} onInput={setPageContext} />
        <Actions actions={actions} onChange={setActions} />
        <fieldset class="group">
          <legend>metadata</legend>
          <OgImage value={ogImage} onInput={setOgImage} assets={assets.data} />
        </fieldset>
      </ApiForm>
    </details>
  );
}

/** Headline, subheadline and Markdown sections; `save` sends them (the page's content, or a draft version's). */
export function ContentEditor({
  label,
  initial,
  save,
}: {
  label: string;
  initial: PageContent | null | undefined;
  save: (content: PageContent) => Promise<unknown>;
}) {
  const [headline, setHeadline] = useState(initial?.headline ?? '');
  const [subheadline, setSubheadline] = useState(initial?.subheadline ?? '');
  const [sections, setSections] = useState(initial?.sections ?? []);
  const set = (i: number, patch: Partial<PageContent['sections'][number]>) =>
    setSections(sections.map((s, j) => (j === i ? { ...s, ...patch } : s)));
  return (
    <ApiForm label={label} onSubmit={() => save({ headline, subheadline, sections })}>
      <p class="muted small">
        Tokens, filled when the page is served:{' '}
        {TOKENS.map((t) => (
          <code key={t}>{t} </code>
        ))}
      </p>
      <Field name="headline" pointer="/content/headline" value={headline} onInput={setHeadline} />
      <Field name="subheadline" pointer="/content/subheadline" value={subheadline} onInput={setSubheadline} />
      <fieldset class="group">
        <legend>sections</legend>
        {sections.map((s, i) => (
          <fieldset key={i} class="item">
            <legend>sections/{i}</legend>
            <Field name="heading" pointer={`/content/sections/${i}/heading`} value={s.heading} onInput={(v) => set(i, { heading: v })} />
            <Field
              kind="textarea"
              name="body"
              pointer={`/content/sections/${i}/body`}
              value={s.body}
              onInput={(v) => set(i, { body: v })}
              hint="Markdown"
              rows={6}
            />
            <button type="button" class="secondary" onClick={() => setSections(sections.filter((_, j) => j !== i))}>
              Remove section {i + 1}
            </button>
          </fieldset>
        ))}
        <button type="button" class="secondary" onClick={() => setSections([...sections, { heading: '', body: '' }])}>
          Add a section
        </button>
      </fieldset>
    </ApiForm>
  );
}

/** Publish, unpublish, archive and delete, each confirmed first. */
export function PageStatusActions({ page, changed }: { page: Page; changed: () => void }) {
  const path = { page_id: page.pageId };
  const status = async (next: 'published' | 'draft' | 'archived') =>
    must(await api.PATCH('/v0/pages/{page_id}', { params: { path }, body: { status: next } }));
  return (
    <div class="actions">
      {page.status !== 'published' && (
        <WriteButton
          label="Publish"
          kind="primary"
          confirm={`Publish “${page.name}”? Its links serve it at once.`}
          action={() => status('published')}
          done={changed}
        />
      )}
      {page.status === 'published' && (
        <WriteButton
          label="Unpublish"
          confirm={`Unpublish “${page.name}”? Its links stop serving it.`}
          action={() => status('draft')}
          done={changed}
        />
      )}
      {page.status !== 'archived' && (
        <WriteButton label="Archive" confirm={`Archive “${page.name}”?`} action={() => status('archived')} done={changed} />
      )}
      <WriteButton
        label="Delete"
        kind="danger"
        confirm={`Delete “${page.name}” for good, with its audiences and links?`}
        action={async () => succeeded(await api.DELETE('/v0/pages/{page_id}', { params: { path } }))}
        done={() => {
          location.hash = href('pages');
        }}
      />
    </div>
  );
}
