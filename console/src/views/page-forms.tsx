import { useState } from 'preact/hooks';
import { type Asset, api, must, once, type Page, type PageAction, succeeded } from '../api.js';
import { useImages } from '../choices.js';
import { Section, WriteButton } from '../components.js';
import { ImageField } from '../image-field.js';
import { ApiForm, Field, useExactProblems } from '../form.js';
import { href } from '../router.js';
import { type Template, TemplateChoice } from './content-editor/templates.js';

// Writing a page: the "New page" form, its settings (buttons and how it shows in search results
// and link previews) and its status actions (content: content-editor/). Labels are plain words; the
// API's field names are in the hints, and pointers are the request body's.

const PAGE_TYPES = ['inbound', 'outbound', 'call_followup', 'sales_deck', 'custom'] as const;
type PageType = (typeof PAGE_TYPES)[number];
const PAGE_TYPE_WORDS: [PageType, string][] = [
  ['inbound', 'Inbound: for visitors who find you'],
  ['outbound', 'Outbound: for people you reach out to'],
  ['call_followup', 'Call follow-up: after a sales call'],
  ['sales_deck', 'Sales deck: a pitch to read'],
  ['custom', 'Something else'],
];

function OgImage({ value, onInput, assets }: { value: string; onInput: (v: string) => void; assets: Asset[] | undefined }) {
  return (
    <ImageField
      name="ogImageAssetId"
      label="Image in link previews"
      pointer="/metadata/ogImageAssetId"
      value={value}
      onInput={onInput}
      images={assets}
      hint="An image from Assets, shown when the link is shared (ogImageAssetId)"
    />
  );
}

/** The API's words about one whole button (`/actions/0`), beside it rather than only under the form. */
function ItemProblems({ pointer }: { pointer: string }) {
  const messages = useExactProblems(pointer);
  if (messages.length === 0) return null;
  return <p class="error field-error">{messages.join('; ')}</p>;
}

function Actions({ actions, onChange }: { actions: PageAction[]; onChange: (next: PageAction[]) => void }) {
  const set = (i: number, patch: Partial<PageAction>) => onChange(actions.map((a, j) => (j === i ? { ...a, ...patch } : a)));
  return (
    <fieldset class="group">
      <legend>Buttons</legend>
      <p class="muted small">What a visitor can do on the page: follow a link, or fill in a lead form (actions).</p>
      <ItemProblems pointer="/actions" />
      {actions.map((a, i) => (
        <fieldset key={a.actionId ?? `new-${i}`} class="item">
          <legend>Button {i + 1}</legend>
          <ItemProblems pointer={`/actions/${i}`} />
          <Field
            kind="select"
            name="actionType"
            label="What the button does"
            pointer={`/actions/${i}/actionType`}
            value={a.actionType}
            onInput={(v) => set(i, { actionType: v })}
            options={[
              ['link', 'Opens a link'],
              ['form', 'Opens a lead form'],
            ]}
          />
          <Field
            name="buttonTitle"
            label="Button text"
            pointer={`/actions/${i}/buttonTitle`}
            value={a.buttonTitle}
            onInput={(v) => set(i, { buttonTitle: v })}
          />
          <Field
            name="purpose"
            label="Purpose"
            pointer={`/actions/${i}/purpose`}
            value={a.purpose}
            onInput={(v) => set(i, { purpose: v })}
            hint="A short word goals and reports use, like demo or pricing"
          />
          {a.actionType !== 'form' && (
            <Field
              kind="url"
              name="url"
              label="Link address"
              pointer={`/actions/${i}/url`}
              value={a.url ?? ''}
              onInput={(v) => set(i, { url: v })}
              hint="https://…"
            />
          )}
          <button type="button" class="secondary" onClick={() => onChange(actions.filter((_, j) => j !== i))}>
            Remove button {i + 1}
          </button>
        </fieldset>
      ))}
      <button
        type="button"
        class="secondary"
        onClick={() => onChange([...actions, { actionType: 'link', buttonTitle: '', purpose: '', url: '' }])}
      >
        Add a button
      </button>
    </fieldset>
  );
}

/** A form action has no URL of its own (the served page posts to itself): none is sent. */
const actionsBody = (actions: PageAction[]) =>
  actions.map((a) => {
    if (a.actionType !== 'form') return a;
    const { url: _, ...form } = a;
    return form;
  });

const CONTEXT_HINT =
  'Who it is for and what it offers, in a sentence or two: the page agent reads it to write each audience’s copy (pageContext)';

export function NewPage({ onClose }: { onClose: () => void }) {
  const [name, setName] = useState('');
  const [title, setTitle] = useState('');
  const [pageType, setPageType] = useState<PageType>('inbound');
  const [pageContext, setPageContext] = useState('');
  const [actions, setActions] = useState<PageAction[]>([]);
  const [metaTitle, setMetaTitle] = useState('');
  const [metaDescription, setMetaDescription] = useState('');
  const [ogImage, setOgImage] = useState('');
  const [templateId, setTemplateId] = useState('');
  const assets = useImages();
  // A template brings its content and buttons; its words fill what is still empty.
  const chooseTemplate = (template: Template | undefined) => {
    setTemplateId(template?.templateId ?? '');
    if (template && !name) setName(template.name);
    if (template && !title) setTitle(template.name);
    if (template && !pageContext) setPageContext(template.description);
  };
  const submit = async () => {
    const metadata = {
      ...(metaTitle ? { title: metaTitle } : {}),
      ...(metaDescription ? { description: metaDescription } : {}),
      ...(ogImage ? { ogImageAssetId: ogImage } : {}),
    };
    const page = must(
      await api.POST('/v0/pages', {
        params: { header: once() },
        body: { name, title, pageType, pageContext, metadata, ...(templateId ? { templateId } : { actions: actionsBody(actions) }) },
      }),
    );
    location.hash = href('pages', page.pageId);
  };
  return (
    <Section title="New page">
      <ApiForm label="New page" submitLabel="Create page" onSubmit={submit} notice="Created.">
        <TemplateChoice value={templateId} onChoose={chooseTemplate} />
        <Field
          name="name"
          label="Page name"
          value={name}
          onInput={setName}
          required
          maxLength={255}
          hint="For you: visitors never see it"
        />
        <Field name="title" label="Title" value={title} onInput={setTitle} required maxLength={255} hint="The browser tab’s text" />
        <TypeAndPurpose pageType={pageType} onType={setPageType} pageContext={pageContext} onContext={setPageContext} />
        {templateId ? (
          <p class="muted small">The page starts with the template’s content and buttons: change them once it is created.</p>
        ) : (
          <Actions actions={actions} onChange={setActions} />
        )}
        <fieldset class="group">
          <legend>In search results and link previews</legend>
          <Field
            name="title"
            label="Heading shown in search results"
            pointer="/metadata/title"
            value={metaTitle}
            onInput={setMetaTitle}
            hint="Empty: the page’s own"
          />
          <Field
            name="description"
            label="Description shown in search results"
            pointer="/metadata/description"
            value={metaDescription}
            onInput={setMetaDescription}
          />
          <OgImage value={ogImage} onInput={setOgImage} assets={assets.data} />
        </fieldset>
      </ApiForm>
      <button type="button" class="secondary" onClick={onClose}>
        Cancel
      </button>
    </Section>
  );
}

/** The page's type and what it is for: the two fields both page forms ask for. */
function TypeAndPurpose(props: { pageType: PageType; onType: (v: PageType) => void; pageContext: string; onContext: (v: string) => void }) {
  return (
    <>
      <Field
        kind="select"
        name="pageType"
        label="Page type"
        value={props.pageType}
        onInput={(v) => props.onType(v as PageType)}
        options={PAGE_TYPE_WORDS}
      />
      <Field
        kind="textarea"
        name="pageContext"
        label="What the page is for"
        value={props.pageContext}
        onInput={props.onContext}
        hint={CONTEXT_HINT}
      />
    </>
  );
}

/** Name, type, purpose, buttons and link preview image of an existing page (PATCH: metadata is merged). */
export function PageSettings({ page, saved }: { page: Page; saved: () => void }) {
  const [name, setName] = useState(page.name);
  const [pageType, setPageType] = useState<PageType>(page.pageType);
  const [pageContext, setPageContext] = useState(page.pageContext);
  const [actions, setActions] = useState<PageAction[]>(
    page.actions.map(({ actionId, purpose, buttonTitle, actionType, url }) => ({ actionId, purpose, buttonTitle, actionType, url })),
  );
  const [ogImage, setOgImage] = useState(page.metadata?.ogImageAssetId ?? '');
  const assets = useImages();
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
    <Section title="Settings">
      <p class="muted small">Name, type, what it is for, buttons, link previews</p>
      <ApiForm label="Page settings" onSubmit={submit}>
        <Field name="name" label="Page name" value={name} onInput={setName} required maxLength={255} />
        <TypeAndPurpose pageType={pageType} onType={setPageType} pageContext={pageContext} onContext={setPageContext} />
        <Actions actions={actions} onChange={setActions} />
        <fieldset class="group">
          <legend>In link previews</legend>
          <OgImage value={ogImage} onInput={setOgImage} assets={assets.data} />
        </fieldset>
      </ApiForm>
    </Section>
  );
}

/** Unpublish, archive and delete, each confirmed first (Publish is the content editor's, beside Save). */
export function PageStatusActions({ page, changed }: { page: Page; changed: () => void }) {
  const path = { page_id: page.pageId };
  const status = async (next: 'draft' | 'archived') =>
    must(await api.PATCH('/v0/pages/{page_id}', { params: { path }, body: { status: next } }));
  return (
    <div class="actions">
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
