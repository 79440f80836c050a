import { useState } from 'preact/hooks';
import { Section } from '../components.js';
import { ApiForm, Field } from '../form.js';
import type { Experience, Site } from './onsite-api.js';
import { openPreview } from './onsite-tools.js';
import { choicesOf, pathOf } from './onsite-urls.js';

// "Preview" (issue 48, §5): the page as a visitor with the chosen UTM values and company would see
// it, in a new tab. The fields are the preview token's body (`/utm/term`, `/company/employees`),
// so the API's refusals show at theirs.

const UTM = ['source', 'medium', 'campaign', 'term', 'content'] as const;
/** The company fields the segments' `company.*` reads. */
const COMPANY: [string, string, string | undefined][] = [
  ['name', "Company's name", undefined],
  ['domain', "Company's domain", 'Like acme.com'],
  ['industry', "Company's industry", undefined],
  ['employees', "Company's number of employees", 'A whole number'],
  ['country', "Company's country", 'Two capital letters, like DE'],
];

export function Preview({ experience, site }: { experience: Experience; site: Site }) {
  const [utm, setUtm] = useState<Record<string, string>>({});
  const [company, setCompany] = useState<Record<string, string>>({});
  const [origin, setOrigin] = useState(site.origins[0] ?? '');
  const [path, setPath] = useState(pathOf(experience.urlMatch));
  return (
    <Section title="Preview">
      <p class="muted small">
        Opens the page in a new tab with this experience's changes, whatever its status and rules, filled for the visitor described here.
        Nothing is measured.
      </p>
      <ApiForm
        label="Preview as a visitor"
        submitLabel="Preview"
        notice="Opened in a new tab."
        onSubmit={() => openPreview(experience.experienceId, origin, path, choicesOf(utm, company))}
      >
        <div class="preview-form">
          <fieldset>
            <legend>The visitor's link (UTM)</legend>
            {UTM.map((k) => (
              <Field
                key={k}
                name={`utm-${k}`}
                label={`UTM ${k}`}
                pointer={`/utm/${k}`}
                maxLength={200}
                value={utm[k] ?? ''}
                onInput={(v) => setUtm((u) => ({ ...u, [k]: v }))}
              />
            ))}
          </fieldset>
          <fieldset>
            <legend>The visitor's company</legend>
            {COMPANY.map(([k, label, hint]) => (
              <Field
                key={k}
                name={`company-${k}`}
                label={label}
                pointer={`/company/${k}`}
                maxLength={253}
                hint={hint}
                value={company[k] ?? ''}
                onInput={(v) => setCompany((c) => ({ ...c, [k]: v }))}
              />
            ))}
          </fieldset>
        </div>
        <div class="controls">
          {site.origins.length > 1 && (
            <Field kind="select" name="origin" label="On" pointer="/origin" value={origin} onInput={setOrigin} options={site.origins} />
          )}
          <Field name="path" label="Page" pointer="/page" value={path} maxLength={500} onInput={setPath} />
        </div>
      </ApiForm>
    </Section>
  );
}
