import { useState } from 'preact/hooks';
import { type Account, type Audience, type AudienceVersion, api, must, once, type Person } from '../api.js';
import { messageOf, Section, WriteButton } from '../components.js';
import { ApiForm, Field } from '../form.js';
import { href } from '../router.js';
import { AudienceContent } from './content-editor/version-content.js';

// Writing audiences: "New audience" for a person or an account found by the API's search
// endpoints (never a list loaded here), its route key and flags, and a draft version's content
// and moves (publish, queue, cancel).

type Found = { kind: 'person'; item: Person } | { kind: 'account'; item: Account };

/** Searches persons or accounts through the API; the chosen one is a radio button. */
function Picker({ kind, chosen, onChoose }: { kind: 'person' | 'account'; chosen: string; onChoose: (found: Found) => void }) {
  const [query, setQuery] = useState('');
  const [results, setResults] = useState<Found[]>();
  const [error, setError] = useState<string>();
  const search = async () => {
    setError(undefined);
    try {
      const q = { query, limit: 20 };
      setResults(
        kind === 'person'
          ? must(await api.GET('/v0/persons/search', { params: { query: q } })).items.map((item): Found => ({ kind, item }))
          : must(await api.GET('/v0/accounts/search', { params: { query: q } })).items.map((item): Found => ({ kind, item })),
      );
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const idOf = (f: Found) => (f.kind === 'person' ? f.item.personId : f.item.accountId);
  const describe = (f: Found) =>
    f.kind === 'person' ? `${f.item.name}${f.item.email ? ` <${f.item.email}>` : ''}` : `${f.item.name} (${f.item.domain})`;
  return (
    <div class="picker">
      <div class="controls">
        <label>
          Search {kind === 'person' ? 'persons' : 'accounts'}{' '}
          <input
            type="search"
            name="query"
            value={query}
            maxLength={255}
            onInput={(e) => setQuery(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter') {
                e.preventDefault();
                void search();
              }
            }}
          />
        </label>
        <button type="button" class="secondary" onClick={search}>
          Search
        </button>
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {results && (
        <fieldset class="results">
          <legend>{results.length === 0 ? 'Nothing matches' : `Choose a ${kind}`}</legend>
          {results.map((f) => (
            <label key={idOf(f)} class="choice">
              <input type="radio" name={`${kind}Choice`} checked={chosen === idOf(f)} onChange={() => onChoose(f)} /> {describe(f)}
            </label>
          ))}
        </fieldset>
      )}
    </div>
  );
}

export function NewAudience({ pageId, onClose }: { pageId: string; onClose: () => void }) {
  const [kind, setKind] = useState<'person' | 'account'>('person');
  const [found, setFound] = useState<Found>();
  const [customName, setCustomName] = useState('');
  const [personRouteKey, setRouteKey] = useState('');
  const [homePage, setHomePage] = useState(false);
  const submit = async () => {
    // An audience names a person; an account is named by the audience and told to the page agent.
    const target =
      found?.kind === 'person'
        ? { personId: found.item.personId }
        : found?.kind === 'account'
          ? { customName: customName || found.item.name, supplementaryContext: `For the account ${found.item.name} (${found.item.domain})` }
          : {};
    const audience = must(
      await api.POST('/v0/pages/{page_id}/audiences', {
        params: { path: { page_id: pageId }, header: once() },
        body: {
          ...target,
          ...(customName && found?.kind !== 'account' ? { customName } : {}),
          ...(personRouteKey ? { personRouteKey } : {}),
          flags: homePage ? ['home_page'] : [],
        },
      }),
    );
    location.hash = href('pages', pageId, 'audiences', audience.audienceId);
  };
  const chosen = found ? (found.kind === 'person' ? found.item.personId : found.item.accountId) : '';
  return (
    <Section title="New audience">
      <ApiForm label="New audience" submitLabel="Create audience" onSubmit={submit} notice="Created.">
        <Field
          kind="select"
          name="for"
          label="For"
          pointer="/personId"
          value={kind}
          onInput={(v) => {
            setKind(v as 'person' | 'account');
            setFound(undefined);
          }}
          options={[
            ['person', 'a person'],
            ['account', 'an account'],
          ]}
        />
        <Picker kind={kind} chosen={chosen} onChoose={setFound} />
        <Field
          name="customName"
          label="Audience name"
          value={customName}
          onInput={setCustomName}
          maxLength={255}
          hint="Empty: named after the person"
        />
        <Field
          name="personRouteKey"
          label="Link key"
          value={personRouteKey}
          onInput={setRouteKey}
          maxLength={255}
          hint="A short word for the person's links, like jane: unique among the page's audiences (personRouteKey)"
        />
        <label class="choice">
          <input type="checkbox" name="flags" checked={homePage} onChange={(e) => setHomePage(e.currentTarget.checked)} /> Serve it on the
          home page
        </label>
      </ApiForm>
      <button type="button" class="secondary" onClick={onClose}>
        Cancel
      </button>
    </Section>
  );
}

export function AudienceSettings({ audience, saved }: { audience: Audience; saved: () => void }) {
  const [personRouteKey, setRouteKey] = useState(audience.personRouteKey ?? '');
  const [customName, setCustomName] = useState(audience.customName ?? '');
  const [homePage, setHomePage] = useState(audience.flags.includes('home_page'));
  const submit = async () => {
    must(
      await api.PATCH('/v0/pages/{page_id}/audiences/{audience_id}', {
        params: { path: { page_id: audience.pageId, audience_id: audience.audienceId } },
        body: { personRouteKey: personRouteKey || null, customName: customName || null, flags: homePage ? ['home_page'] : [] },
      }),
    );
    saved();
  };
  return (
    <Section title="Settings">
      <ApiForm label="Audience settings" onSubmit={submit}>
        <Field name="customName" label="Audience name" value={customName} onInput={setCustomName} maxLength={255} />
        <Field name="personRouteKey" label="Link key" value={personRouteKey} onInput={setRouteKey} maxLength={255} hint="personRouteKey" />
        <label class="choice">
          <input type="checkbox" name="flags" checked={homePage} onChange={(e) => setHomePage(e.currentTarget.checked)} /> Serve it on the
          home page
        </label>
      </ApiForm>
    </Section>
  );
}

/** The latest version: edit a draft's content, publish, queue or cancel it; or start a new draft. */
export function LatestVersion({ audience, version, changed }: { audience: Audience; version: AudienceVersion; changed: () => void }) {
  const path = { page_id: audience.pageId, audience_id: audience.audienceId };
  const vpath = { ...path, version_id: version.versionId };
  const move = async (status: 'published' | 'queued') =>
    must(
      await api.PATCH('/v0/pages/{page_id}/audiences/{audience_id}/versions/{version_id}', { params: { path: vpath }, body: { status } }),
    );
  const open = !['published', 'cancelled', 'archived'].includes(version.status);
  return (
    <Section title={`Version ${version.versionNumber} (${version.status})`}>
      <div class="actions">
        {open && version.status !== 'draft' && (
          <WriteButton
            label="Publish"
            kind="primary"
            confirm={`Publish version ${version.versionNumber}? It replaces the published one.`}
            action={() => move('published')}
            done={changed}
          />
        )}
        {(version.status === 'draft' || version.status === 'pending') && (
          <WriteButton label="Queue" action={() => move('queued')} done={changed} />
        )}
        {open && (
          <WriteButton
            label="Cancel version"
            confirm={`Cancel version ${version.versionNumber}?`}
            action={async () =>
              must(
                await api.POST('/v0/pages/{page_id}/audiences/{audience_id}/versions/{version_id}/cancel', {
                  params: { path: vpath, header: once() },
                  body: {},
                }),
              )
            }
            done={changed}
          />
        )}
        {!open && (
          <WriteButton
            label="New draft version"
            action={async () =>
              must(await api.POST('/v0/pages/{page_id}/audiences/{audience_id}/versions', { params: { path, header: once() }, body: {} }))
            }
            done={changed}
          />
        )}
      </div>
      <AudienceContent
        audience={audience}
        version={version}
        revision={`${version.versionId}:${version.status}:${audience.publishedVersion.versionId}`}
        changed={changed}
      />
    </Section>
  );
}
