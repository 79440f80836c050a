import { useState } from 'preact/hooks';
import { type Audience, api, must, once } from '../api.js';
import { Section } from '../components.js';
import { ApiForm, Field } from '../form.js';
import { href } from '../router.js';

// Segment audiences (issue 39): anonymous visitors chosen by rules, built here in words
// ("Visitors whose UTM source is linkedin"), one condition a row.

type Rules = NonNullable<Audience['rules']>;
/** A condition as sent: its value one of the shapes the API takes (an answer describes it only). */
export type Condition = Omit<Rules['conditions'][number], 'value'> & { value?: string | number | boolean | string[] };

const FIELDS: [string, string][] = [
  ['utm.source', 'UTM source'],
  ['utm.medium', 'UTM medium'],
  ['utm.campaign', 'UTM campaign'],
  ['utm.term', 'UTM term'],
  ['utm.content', 'UTM content'],
  ['query', 'query parameter'],
  ['referrer.host', 'referring site'],
  ['referrer.channel', 'channel'],
  ['visitor.country', 'country'],
  ['visitor.device', 'device'],
  ['visitor.language', 'language'],
  ['visitor.returning', 'came back today'],
  ['visitor.channelGroup', 'channel group (GA4)'],
  ['company.name', "company's name"],
  ['company.domain', "company's domain"],
  ['company.industry', "company's industry"],
  ['company.employees', "company's number of employees"],
  ['company.country', "company's country"],
];
const OPERATORS: [Condition['operator'], string][] = [
  ['equals', 'is'],
  ['not_equals', 'is not'],
  ['contains', 'contains'],
  ['starts_with', 'starts with'],
  ['ends_with', 'ends with'],
  ['in', 'is one of'],
  ['exists', 'is known'],
  ['gte', 'is at least'],
  ['lte', 'is at most'],
];

const wordsOf = (list: [string, string][], key: string) => list.find(([k]) => k === key)?.[1] ?? key;

/** A condition as the row edits it: the value as typed, the query parameter's name apart. */
export interface Row {
  field: string;
  name: string;
  operator: Condition['operator'];
  value: string;
}

export const toRow = (c: Condition): Row => ({
  field: c.field.startsWith('query.') ? 'query' : c.field,
  name: c.field.startsWith('query.') ? c.field.slice('query.'.length) : '',
  operator: c.operator,
  value: Array.isArray(c.value) ? c.value.join(', ') : c.value === undefined ? '' : String(c.value),
});

/** The value the API takes for a row: a list for "is one of", a number for bounds, a boolean where asked. */
export function toCondition(row: Row): Condition {
  const field = row.field === 'query' ? `query.${row.name}` : row.field;
  const text = row.value.trim();
  if (row.operator === 'exists') return { field, operator: 'exists', value: text !== 'no' };
  if (row.field === 'visitor.returning') return { field, operator: row.operator, value: text !== 'no' };
  if (row.operator === 'in') return { field, operator: 'in', value: text.split(',').map((v) => v.trim()) };
  if (row.operator === 'gte' || row.operator === 'lte') return { field, operator: row.operator, value: Number(text) };
  return { field, operator: row.operator, value: text };
}

/** One row in words: "whose UTM source is linkedin". */
export function rowInWords(row: Row): string {
  if (row.field === 'visitor.returning') return row.value.trim() === 'no' ? 'on their first visit today' : 'who came back today';
  const subject = row.field === 'query' ? `query parameter "${row.name}"` : wordsOf(FIELDS, row.field);
  const value = row.operator === 'exists' ? '' : ` ${row.value.trim()}`;
  return `whose ${subject} ${wordsOf(OPERATORS, row.operator)}${value}`;
}

export function rulesInWords(match: 'all' | 'any', rows: Row[]): string {
  return `Visitors ${rows.map(rowInWords).join(match === 'all' ? ' and ' : ' or ')}`;
}

export const emptyRow = (): Row => ({ field: 'utm.source', name: '', operator: 'equals', value: '' });

/** The rule builder: match all or any, one row per condition (1–20), and the rules read back in words. */
export function RuleBuilder({
  match,
  rows,
  onChange,
}: {
  match: 'all' | 'any';
  rows: Row[];
  onChange: (match: 'all' | 'any', rows: Row[]) => void;
}) {
  const set = (i: number, patch: Partial<Row>) =>
    onChange(
      match,
      rows.map((r, j) => (j === i ? { ...r, ...patch } : r)),
    );
  return (
    <fieldset class="rules">
      <legend>Who sees it</legend>
      <Field
        kind="select"
        name="match"
        label="Visitors who match"
        pointer="/rules/match"
        value={match}
        onInput={(v) => onChange(v as 'all' | 'any', rows)}
        options={[
          ['all', 'every condition'],
          ['any', 'any condition'],
        ]}
      />
      {rows.map((row, i) => (
        <div class="controls" key={i}>
          <Field
            kind="select"
            name={`field-${i}`}
            label="whose"
            pointer={`/rules/conditions/${i}/field`}
            value={row.field}
            onInput={(v) => set(i, { field: v })}
            options={FIELDS}
          />
          {row.field === 'query' && (
            <Field
              name={`name-${i}`}
              label="named"
              pointer={`/rules/conditions/${i}/field`}
              value={row.name}
              maxLength={40}
              onInput={(v) => set(i, { name: v })}
            />
          )}
          <Field
            kind="select"
            name={`operator-${i}`}
            label="is"
            pointer={`/rules/conditions/${i}/operator`}
            value={row.operator}
            onInput={(v) => set(i, { operator: v as Condition['operator'] })}
            options={OPERATORS}
          />
          <Field
            name={`value-${i}`}
            label="value"
            pointer={`/rules/conditions/${i}/value`}
            value={row.value}
            maxLength={2000}
            hint={
              row.operator === 'in'
                ? 'Separated by commas'
                : row.field === 'visitor.returning' || row.operator === 'exists'
                  ? 'yes or no'
                  : undefined
            }
            onInput={(v) => set(i, { value: v })}
          />
          {rows.length > 1 && (
            <button
              type="button"
              class="secondary"
              onClick={() =>
                onChange(
                  match,
                  rows.filter((_, j) => j !== i),
                )
              }
            >
              Remove condition
            </button>
          )}
        </div>
      ))}
      {rows.length < 20 && (
        <button type="button" class="secondary" onClick={() => onChange(match, [...rows, emptyRow()])}>
          Add condition
        </button>
      )}
      <p class="hint" aria-live="polite">
        {rulesInWords(match, rows)}
      </p>
    </fieldset>
  );
}

/** "New segment": a name, a priority and the rules; created, it opens like any audience. */
export function NewSegment({ pageId, onClose }: { pageId: string; onClose: () => void }) {
  const [customName, setCustomName] = useState('');
  const [priority, setPriority] = useState('0');
  const [match, setMatch] = useState<'all' | 'any'>('all');
  const [rows, setRows] = useState<Row[]>([emptyRow()]);
  const submit = async () => {
    const audience = must(
      await api.POST('/v0/pages/{page_id}/audiences', {
        params: { path: { page_id: pageId }, header: once() },
        body: {
          ...(customName ? { customName } : {}),
          priority: Number(priority),
          rules: { match, conditions: rows.map(toCondition) },
        },
      }),
    );
    location.hash = href('pages', pageId, 'audiences', audience.audienceId);
  };
  return (
    <Section title="New segment">
      <ApiForm label="New segment" submitLabel="Create segment" onSubmit={submit} notice="Created.">
        <Field name="customName" label="name" value={customName} onInput={setCustomName} maxLength={255} />
        <Field name="priority" value={priority} onInput={setPriority} maxLength={4} hint="0–1000: the highest matching segment is shown" />
        <RuleBuilder
          match={match}
          rows={rows}
          onChange={(m, r) => {
            setMatch(m);
            setRows(r);
          }}
        />
      </ApiForm>
      <button type="button" class="secondary" onClick={onClose}>
        Cancel
      </button>
    </Section>
  );
}

/** A segment's rules and priority, changed in place. */
export function SegmentRules({ audience, saved }: { audience: Audience; saved: () => void }) {
  const rules = audience.rules as Rules;
  const [priority, setPriority] = useState(String(audience.priority ?? 0));
  const [match, setMatch] = useState<'all' | 'any'>(rules.match);
  const [rows, setRows] = useState<Row[]>(rules.conditions.map((c) => toRow(c as Condition)));
  const submit = async () => {
    must(
      await api.PATCH('/v0/pages/{page_id}/audiences/{audience_id}', {
        params: { path: { page_id: audience.pageId, audience_id: audience.audienceId } },
        body: { priority: Number(priority), rules: { match, conditions: rows.map(toCondition) } },
      }),
    );
    saved();
  };
  return (
    <Section title="Segment">
      <ApiForm label="Segment rules" onSubmit={submit}>
        <Field name="priority" value={priority} onInput={setPriority} maxLength={4} hint="0–1000: the highest matching segment is shown" />
        <RuleBuilder
          match={match}
          rows={rows}
          onChange={(m, r) => {
            setMatch(m);
            setRows(r);
          }}
        />
      </ApiForm>
    </Section>
  );
}
