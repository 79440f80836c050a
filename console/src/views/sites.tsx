import { useId, useState } from 'preact/hooks';
import { Failure, LoadMore, Section, Status, useBusy, useCursorList, When, WriteButton } from '../components.js';
import { ApiForm, Field, FieldNotes, OpenButton, useExactProblems } from '../form.js';
import { href } from '../router.js';
import { plural } from '../words.js';
import { createSite, deleteSite, listSites, type Site, updateSite } from './onsite-api.js';

// Sites (issue 48): the customer's own website, personalised by a snippet in its head. Add one
// with its origins, copy the snippet, see whether it runs ("installed" once the script has been
// seen on one of the origins), change its name and origins, or delete it.

export const MAX_ORIGINS = 20;

/** An origin as typed, with a key of its own so a removed row takes its own input away. */
export interface OriginRow {
  key: number;
  value: string;
}
let nextKey = 1;
export const originRows = (origins: string[]): OriginRow[] => origins.map((value) => ({ key: nextKey++, value }));

/** One input per origin, so the API's error at `/origins/{i}` shows under the origin it is about. */
export function OriginFields({ origins, onChange }: { origins: OriginRow[]; onChange: (origins: OriginRow[]) => void }) {
  const whole = useExactProblems('/origins');
  const id = useId();
  return (
    <fieldset class="origins" aria-describedby={`${id}-hint${whole.length ? ` ${id}-error` : ''}`}>
      <legend>Where the site is (its origins)</legend>
      <FieldNotes
        id={id}
        hint="Each an address without a path, like https://www.example.com; https, or http for localhost"
        messages={whole}
      />
      {origins.map((origin, i) => (
        <div class="controls" key={origin.key}>
          <Field
            kind="url"
            name="origins"
            label={`Origin ${i + 1}`}
            pointer={`/origins/${i}`}
            value={origin.value}
            maxLength={300}
            onInput={(v) => onChange(origins.map((o) => (o.key === origin.key ? { ...o, value: v } : o)))}
          />
          {origins.length > 1 && (
            <button
              type="button"
              class="secondary"
              aria-label={`Remove ${origin.value.trim() || `origin ${i + 1}`}`}
              onClick={() => onChange(origins.filter((o) => o.key !== origin.key))}
            >
              Remove
            </button>
          )}
        </div>
      ))}
      {origins.length < MAX_ORIGINS && (
        <button type="button" class="secondary" onClick={() => onChange([...origins, ...originRows([''])])}>
          Add another origin
        </button>
      )}
    </fieldset>
  );
}

/** Origins as sent: each trimmed, an empty row left out (an empty first row is sent, so the API names it). */
const cleaned = (origins: OriginRow[]): string[] => {
  const given = origins.map((o) => o.value.trim()).filter((o) => o !== '');
  return given.length > 0 ? given : [''];
};

/** "Installed, last seen …" once the script has run on one of the site's origins; "Not seen yet" before. */
export function Installed({ site }: { site: Site }) {
  if (!site.lastSeenAt)
    return (
      <span class="badge badge-draft" data-installed="no">
        Not seen yet
      </span>
    );
  return (
    <span data-installed="yes">
      <span class="badge badge-live">Installed</span>, last seen <When at={site.lastSeenAt} />
    </span>
  );
}

/** The snippet to paste into the site's head, shown as text, with a button that copies it. */
export function Snippet({ site }: { site: Site }) {
  const [copied, setCopied] = useState('');
  const { error, run } = useBusy();
  const id = `snippet-${site.siteId}`;
  const copy = () =>
    run(async () => {
      setCopied('');
      try {
        await navigator.clipboard.writeText(site.snippet);
        setCopied('Copied: paste it into the <head> of every page of the site.');
      } catch {
        // No clipboard (an insecure page, a refused permission): the text is selected for Ctrl+C.
        const code = document.getElementById(id);
        if (code) getSelection()?.selectAllChildren(code);
        throw new Error('The browser refused to copy: the snippet is selected, press Ctrl+C (⌘C).');
      }
    });
  return (
    <div class="snippet">
      <p class="muted small">Paste this into the head of every page of the site (before other scripts):</p>
      <pre>
        <code id={id} data-snippet={site.siteId}>
          {site.snippet}
        </code>
      </pre>
      <button type="button" class="secondary" aria-label={`Copy snippet of ${site.name}`} onClick={copy}>
        Copy snippet
      </button>
      <output aria-live="polite">{copied}</output>
      <Failure text={error} />
    </div>
  );
}

function NewSite({ onClose, added }: { onClose: () => void; added: (site: Site) => void }) {
  const [name, setName] = useState('');
  const [origins, setOrigins] = useState(() => originRows(['']));
  const submit = async () => {
    added(await createSite({ name: name.trim(), origins: cleaned(origins) }));
  };
  return (
    <Section title="New site">
      <ApiForm label="New site" submitLabel="Add site" onSubmit={submit}>
        <Field name="name" label="Site name" value={name} onInput={setName} maxLength={255} hint="For you, like Marketing site" />
        <OriginFields origins={origins} onChange={setOrigins} />
      </ApiForm>
      <button type="button" class="secondary" onClick={onClose}>
        Cancel
      </button>
    </Section>
  );
}

function EditSite({ site, saved }: { site: Site; saved: (message: string) => void }) {
  const [name, setName] = useState(site.name);
  const [origins, setOrigins] = useState(() => originRows(site.origins));
  const submit = async () => {
    const updated = await updateSite(site.siteId, { name: name.trim(), origins: cleaned(origins) });
    saved(`Saved ${updated.name}.`);
  };
  return (
    <ApiForm label={`Edit ${site.name}`} onSubmit={submit} notice="Saved.">
      <Field name="name" label="Site name" value={name} onInput={setName} maxLength={255} />
      <OriginFields origins={origins} onChange={setOrigins} />
    </ApiForm>
  );
}

function SiteCard({ site, changed }: { site: Site; changed: (message: string) => void }) {
  const [editing, setEditing] = useState(false);
  return (
    <li data-site={site.siteId}>
      <h3>
        {site.name} <Installed site={site} />
      </h3>
      <p class="muted small">
        {plural('origin', site.origins.length)}: {site.origins.join(', ')} · added <When at={site.createdAt} />
      </p>
      <Snippet site={site} />
      <div class="actions">
        <a href={href('sites', site.siteId, 'experiences')}>Experiences on {site.name}</a>
        <button type="button" class="secondary" aria-expanded={editing} onClick={() => setEditing(!editing)}>
          {editing ? 'Close editing' : `Edit ${site.name}`}
        </button>
        <WriteButton
          label="Delete"
          name={`Delete ${site.name}`}
          kind="danger"
          confirm={`Delete ${site.name}? Its snippet stops changing the site and its experiences are deleted.`}
          action={() => deleteSite(site.siteId)}
          done={() => changed(`Deleted ${site.name}.`)}
        />
      </div>
      {editing && <EditSite site={site} saved={changed} />}
    </li>
  );
}

export function SitesView() {
  const sites = useCursorList((cursor) => listSites(cursor), []);
  const [adding, setAdding] = useState(false);
  const [notice, setNotice] = useState('');
  const changed = (message: string) => {
    setNotice(message);
    sites.reload();
  };
  return (
    <Section title="Sites">
      <p class="muted">
        Personalise a website you already have: add it, paste its snippet into the head of its pages, then create experiences that change
        its pages for chosen visitors.
      </p>
      {adding ? (
        <NewSite
          onClose={() => setAdding(false)}
          added={(site) => {
            setAdding(false);
            changed(`Added ${site.name}: copy its snippet into the head of the site's pages.`);
          }}
        />
      ) : (
        <OpenButton label="Add a site" onClick={() => setAdding(true)} />
      )}
      <output aria-live="polite" data-notice="">
        {notice}
      </output>
      <Status loaded={sites}>
        {sites.items.length === 0 ? (
          <p>No sites yet.</p>
        ) : (
          <ul class="cards">
            {sites.items.map((s) => (
              <SiteCard key={`${s.siteId}:${s.updatedAt}`} site={s} changed={changed} />
            ))}
          </ul>
        )}
        <LoadMore list={sites} />
      </Status>
    </Section>
  );
}
