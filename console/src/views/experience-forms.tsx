import { useState } from 'preact/hooks';
import { ApiForm, Field } from '../form.js';
import { type ChangeRow, ChangesEditor, emptyChange, toChange, toRow as toChangeRow } from './changes-editor.js';
import {
  EXPERIENCE_STATUSES,
  type Experience,
  type ExperienceBody,
  type ExperienceStatus,
  type Site,
  URL_MATCH_TYPES,
  type UrlMatch,
} from './onsite-api.js';
import { usePick } from './onsite-tools.js';
import { pathOf } from './onsite-urls.js';
import { type Condition, emptyRow, type Row, RuleBuilder, toCondition, toRow } from './segment-forms.js';

// An experience's form (issue 48), new or edited: its name and status, the pages it changes (a
// URL match on the path), who sees it (the segments' rule builder), its priority, holdout and
// conversion page, and its changes.

const STATUS_WORDS: Record<ExperienceStatus, string> = {
  draft: 'Draft: not shown to anyone',
  live: 'Live: shown to the visitors it is for',
  paused: 'Paused: not shown, its results kept',
};
const MATCH_WORDS: Record<UrlMatch['type'], string> = {
  exact: 'The page whose path is',
  prefix: 'Pages whose path starts with',
  glob: 'Pages whose path matches the pattern',
};

/** A number as typed: a number when it is one, else the text, so the API names the field. */
const numberOf = (text: string): number | string => (text.trim() !== '' && Number.isFinite(Number(text)) ? Number(text) : text);

export function ExperienceForm({
  site,
  experience,
  label,
  submitLabel,
  save,
}: {
  site: Site;
  experience?: Experience;
  label: string;
  submitLabel: string;
  /** Sends the body (a create or a PATCH). */
  save: (body: ExperienceBody) => Promise<unknown>;
}) {
  const [name, setName] = useState(experience?.name ?? '');
  const [status, setStatus] = useState<ExperienceStatus>(experience?.status ?? 'draft');
  const [matchType, setMatchType] = useState<UrlMatch['type']>(experience?.urlMatch.type ?? 'exact');
  const [matchValue, setMatchValue] = useState(experience?.urlMatch.value ?? '/');
  // No rules (null): every visitor on the pages it changes.
  const [everyone, setEveryone] = useState(experience ? experience.rules === null : false);
  const [match, setMatch] = useState<'all' | 'any'>(experience?.rules?.match ?? 'all');
  const [conditions, setConditions] = useState<Row[]>(
    experience?.rules ? experience.rules.conditions.map((c) => toRow(c as Condition)) : [emptyRow()],
  );
  const [priority, setPriority] = useState(String(experience?.priority ?? 0));
  const [holdout, setHoldout] = useState(String(experience?.holdoutPercent ?? 0));
  const [conversionUrl, setConversionUrl] = useState(experience?.conversionUrl ?? '');
  const [changes, setChanges] = useState<ChangeRow[]>(() => (experience ? experience.changes.map(toChangeRow) : [emptyChange()]));
  const [origin, setOrigin] = useState(site.origins[0] ?? '');
  const pickState = usePick(site.siteId, site.origins, (key, selector) =>
    setChanges((rows) => rows.map((r) => (r.key === key ? { ...r, selector } : r))),
  );
  const pagePath = pathOf({ type: matchType, value: matchValue });
  const submit = async () => {
    const body: ExperienceBody = {
      siteId: site.siteId,
      name: name.trim(),
      status,
      urlMatch: { type: matchType, value: matchValue.trim() },
      rules: everyone ? null : { match, conditions: conditions.map(toCondition) },
      priority: numberOf(priority) as number,
      holdoutPercent: numberOf(holdout) as number,
      changes: changes.map(toChange),
    };
    // Left out when empty on a new one; cleared with null on an edited one that had one.
    if (conversionUrl.trim()) body.conversionUrl = conversionUrl.trim();
    else if (experience?.conversionUrl) body.conversionUrl = null;
    await save(body);
  };
  return (
    <ApiForm label={label} submitLabel={submitLabel} onSubmit={submit} notice="Saved.">
      <Field
        name="name"
        label="Experience name"
        value={name}
        onInput={setName}
        maxLength={255}
        hint="For you, like Pricing for LinkedIn ads"
      />
      <Field
        kind="select"
        name="status"
        label="Status"
        value={status}
        onInput={(v) => setStatus(v as ExperienceStatus)}
        options={EXPERIENCE_STATUSES.map((s): [string, string] => [s, STATUS_WORDS[s]])}
      />
      <fieldset class="url-match">
        <legend>Pages it changes</legend>
        <div class="controls">
          <Field
            kind="select"
            name="type"
            label="Which pages"
            pointer="/urlMatch/type"
            value={matchType}
            onInput={(v) => setMatchType(v as UrlMatch['type'])}
            options={URL_MATCH_TYPES.map((t): [string, string] => [t, MATCH_WORDS[t]])}
          />
          <Field
            name="value"
            label="Path"
            pointer="/urlMatch/value"
            value={matchValue}
            maxLength={500}
            onInput={setMatchValue}
            hint={
              matchType === 'glob'
                ? 'Like /blog/* (* within one part of the path) or /docs/** (any depth); the query is not part of it'
                : 'Like /pricing; the query is not part of it'
            }
          />
        </div>
      </fieldset>
      <Field
        kind="select"
        name="for"
        label="For"
        pointer="/for"
        value={everyone ? 'everyone' : 'rules'}
        onInput={(v) => setEveryone(v === 'everyone')}
        options={[
          ['rules', 'Visitors who match conditions'],
          ['everyone', 'Every visitor of those pages'],
        ]}
      />
      {!everyone && (
        <RuleBuilder
          match={match}
          rows={conditions}
          onChange={(m, r) => {
            setMatch(m);
            setConditions(r);
          }}
        />
      )}
      <div class="controls">
        <Field
          name="priority"
          label="Priority"
          value={priority}
          onInput={setPriority}
          maxLength={6}
          hint="When two experiences change the same element, the higher one is applied"
        />
        <Field
          name="holdoutPercent"
          label="Holdout (%)"
          value={holdout}
          onInput={setHoldout}
          maxLength={3}
          hint="0–90: the share of matching visitors who see the page unchanged, to measure the difference"
        />
      </div>
      <Field
        name="conversionUrl"
        label="Conversion page (optional)"
        value={conversionUrl}
        maxLength={500}
        onInput={setConversionUrl}
        hint="A path or pattern, like /thank-you: a visitor who reaches it the same day counts as a conversion"
      />
      {site.origins.length > 1 && (
        <Field
          kind="select"
          name="pickOrigin"
          label="Pick elements on"
          pointer="/pickOrigin"
          value={origin}
          onInput={setOrigin}
          options={site.origins}
        />
      )}
      <ChangesEditor
        rows={changes}
        setRows={setChanges}
        pick={{ state: pickState, start: (key) => pickState.start(key, origin, pagePath) }}
      />
    </ApiForm>
  );
}
