import { useId, useState } from 'preact/hooks';
import type { Schema } from '../../api.js';

// A visit described for the live preview (issue 46): what a visitor's link, country, device and
// company would say, so the preview shows the segment's version that visit gets, tokens filled.

export type PreviewVisit = Schema<'PreviewVisit'>;

const UTM = ['source', 'medium', 'campaign', 'term', 'content'] as const;
type Utm = (typeof UTM)[number];
const DEVICES = [
  ['', 'Any device'],
  ['desktop', 'Desktop'],
  ['mobile', 'Phone'],
  ['tablet', 'Tablet'],
] as const;

interface Typed {
  utm: Record<Utm, string>;
  query: string;
  country: string;
  device: string;
  company: { name: string; domain: string; industry: string; employees: string; country: string };
}
const EMPTY: Typed = {
  utm: { source: '', medium: '', campaign: '', term: '', content: '' },
  query: '',
  country: '',
  device: '',
  company: { name: '', domain: '', industry: '', employees: '', country: '' },
};

/** Only what was typed: an empty field is a visit that does not say it. The API checks the rest (400 at its pointer). */
function visitOf(t: Typed): PreviewVisit {
  const said = <K extends string>(fields: Record<K, string>) =>
    Object.fromEntries(
      Object.entries<string>(fields)
        .filter(([, v]) => v.trim() !== '')
        .map(([k, v]) => [k, v.trim()]),
    );
  const utm = said(t.utm);
  // Query parameters as a URL has them: ref=newsletter&plan=pro (a leading ? is fine).
  const query = Object.fromEntries([...new URLSearchParams(t.query.trim().replace(/^\?/, ''))].filter(([k, v]) => k && v));
  const { employees, ...words } = t.company;
  const company = { ...said(words), ...(employees.trim() ? { employees: Number(employees) } : {}) };
  return {
    ...(Object.keys(utm).length ? { utm } : {}),
    ...(Object.keys(query).length ? { query } : {}),
    ...(t.country.trim() ? { country: t.country.trim().toUpperCase() } : {}),
    ...(t.device ? { device: t.device as NonNullable<PreviewVisit['device']> } : {}),
    ...(Object.keys(company).length ? { company } : {}),
  } as PreviewVisit;
}

function Text({ label, value, onInput, hint }: { label: string; value: string; onInput: (v: string) => void; hint?: string }) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        type="text"
        value={value}
        onInput={(e) => onInput(e.currentTarget.value)}
        aria-describedby={hint ? `${id}-hint` : undefined}
      />
      {hint && (
        <span id={`${id}-hint`} class="muted small">
          {hint}
        </span>
      )}
    </div>
  );
}

/** The visit's fields; `onVisit` is told the visit after each change. */
export function VisitFields({ onVisit }: { onVisit: (visit: PreviewVisit) => void }) {
  const [typed, setTyped] = useState(EMPTY);
  const deviceId = useId();
  const change = (next: Typed) => {
    setTyped(next);
    onVisit(visitOf(next));
  };
  return (
    <fieldset class="group visit">
      <legend>The visit</legend>
      {UTM.map((k) => (
        <Text key={k} label={`UTM ${k}`} value={typed.utm[k]} onInput={(v) => change({ ...typed, utm: { ...typed.utm, [k]: v } })} />
      ))}
      <Text
        label="Other query parameters"
        value={typed.query}
        onInput={(query) => change({ ...typed, query })}
        hint="As in the link: ref=newsletter&plan=pro"
      />
      <Text label="Country" value={typed.country} onInput={(country) => change({ ...typed, country })} hint="Two letters, like DE or US" />
      <div class="field">
        <label for={deviceId}>Device</label>
        <select id={deviceId} value={typed.device} onChange={(e) => change({ ...typed, device: e.currentTarget.value })}>
          {DEVICES.map(([v, words]) => (
            <option key={v} value={v}>
              {words}
            </option>
          ))}
        </select>
      </div>
      <Text label="Company name" value={typed.company.name} onInput={(name) => change({ ...typed, company: { ...typed.company, name } })} />
      <Text
        label="Company domain"
        value={typed.company.domain}
        onInput={(domain) => change({ ...typed, company: { ...typed.company, domain } })}
      />
      <Text
        label="Company industry"
        value={typed.company.industry}
        onInput={(industry) => change({ ...typed, company: { ...typed.company, industry } })}
      />
      <Text
        label="Company employees"
        value={typed.company.employees}
        onInput={(employees) => change({ ...typed, company: { ...typed.company, employees } })}
      />
      <Text
        label="Company country"
        value={typed.company.country}
        onInput={(country) => change({ ...typed, company: { ...typed.company, country: country.toUpperCase() } })}
        hint="Two letters"
      />
    </fieldset>
  );
}
