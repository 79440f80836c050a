import { useState } from 'preact/hooks';
import { api, type components, must, once } from '../api.js';
import { pageSearch, purposeSearch, useSearch } from '../choices.js';
import { Section } from '../components.js';
import { ApiForm, Field } from '../form.js';
import { Picker } from '../picker.js';

// Making goals and funnels: what counts (a form sent, a button clicked, a path visited, an event
// tracked), in words, with the one detail each kind needs. The same fields make a funnel's steps.

type GoalCreate = components['schemas']['GoalCreate'];
export type Kind = GoalCreate['kind'];

export const KIND_WORDS: [Kind, string][] = [
  ['form', 'A lead form is sent'],
  ['action', 'A button is clicked'],
  ['path', 'A link is visited'],
  ['event', "An event from the page's script"],
];

/** What one goal or step counts, as the form holds it (every kind's detail, the kind picks one). */
export interface Target {
  kind: Kind;
  pageId: string;
  actionPurpose: string;
  path: string;
  eventName: string;
}
export const emptyTarget = (): Target => ({ kind: 'form', pageId: '', actionPurpose: '', path: '', eventName: '' });

/** The request's fields for a target: the kind and its one detail (a form's page only when chosen). */
export function targetBody(t: Target): Pick<GoalCreate, 'kind' | 'pageId' | 'actionPurpose' | 'path' | 'eventName'> {
  if (t.kind === 'form') return { kind: 'form', ...(t.pageId ? { pageId: t.pageId } : {}) };
  if (t.kind === 'action') return { kind: 'action', actionPurpose: t.actionPurpose };
  if (t.kind === 'path') return { kind: 'path', path: t.path };
  return { kind: 'event', eventName: t.eventName };
}

/** The pages a form goal may be limited to (the first 100). */
/** "What counts" and its detail; `prefix` is the target's pointer (`` for a goal, `/steps/0` for a step). */
export function TargetFields({
  target,
  onChange,
  prefix,
  label = 'What counts',
}: {
  target: Target;
  onChange: (next: Target) => void;
  prefix: string;
  label?: string;
}) {
  const set = (patch: Partial<Target>) => onChange({ ...target, ...patch });
  const pagesNamed = useSearch(pageSearch);
  const purposes = useSearch(purposeSearch);
  return (
    <>
      <Field
        kind="select"
        name="kind"
        label={label}
        pointer={`${prefix}/kind`}
        value={target.kind}
        onInput={(v) => set({ kind: v as Kind })}
        options={KIND_WORDS}
      />
      {target.kind === 'form' && (
        <Picker
          name="pageId"
          label="On which page"
          pointer={`${prefix}/pageId`}
          empty="Any page"
          value={target.pageId ? [target.pageId] : []}
          onChange={(ids) => set({ pageId: ids[0] ?? '' })}
          search={pagesNamed}
        />
      )}
      {target.kind === 'action' && (
        <Picker
          name="actionPurpose"
          label="Button purpose"
          pointer={`${prefix}/actionPurpose`}
          value={target.actionPurpose ? [target.actionPurpose] : []}
          onChange={(ids) => set({ actionPurpose: ids[0] ?? '' })}
          search={purposes}
          typed
          hint="The purpose given to your pages' buttons, like demo"
        />
      )}
      {target.kind === 'path' && (
        <Field
          name="path"
          label="Link path"
          pointer={`${prefix}/path`}
          value={target.path}
          onInput={(v) => set({ path: v })}
          maxLength={2048}
          hint="What follows the domain, starting with /: /pricing"
        />
      )}
      {target.kind === 'event' && (
        <Field
          name="eventName"
          label="Event name"
          pointer={`${prefix}/eventName`}
          value={target.eventName}
          onInput={(v) => set({ eventName: v })}
          maxLength={100}
          hint="As the page's script sends it: pam.track('signup')"
        />
      )}
    </>
  );
}

export function NewGoal({ onClose, created }: { onClose: () => void; created: () => void }) {
  const [name, setName] = useState('');
  const [target, setTarget] = useState(emptyTarget);
  const [currency, setCurrency] = useState('');
  const [maxValue, setMaxValue] = useState('');
  const submit = async () => {
    const body: GoalCreate = {
      name,
      ...targetBody(target),
      ...(currency ? { currency: currency.toUpperCase() } : {}),
      ...(maxValue ? { maxValue: Number(maxValue) } : {}),
    };
    must(await api.POST('/v0/goals', { params: { header: once() }, body }));
    created();
  };
  return (
    <Section title="New goal">
      <ApiForm label="New goal" submitLabel="Create goal" onSubmit={submit} notice="Goal created.">
        <Field name="name" label="Goal name" value={name} onInput={setName} required maxLength={255} hint="Like Demo requested" />
        <TargetFields target={target} onChange={setTarget} prefix="" />
        <Field
          name="currency"
          label="Currency of its value"
          value={currency}
          onInput={setCurrency}
          maxLength={3}
          hint="Optional, a three-letter code like EUR: when the page's script tracks a value"
        />
        <Field
          kind="number"
          name="maxValue"
          label="Highest value one visit may add"
          value={maxValue}
          onInput={setMaxValue}
          hint="Optional; 1,000,000 unless given"
        />
      </ApiForm>
      <button type="button" class="secondary" onClick={onClose}>
        Cancel
      </button>
    </Section>
  );
}

interface Step extends Target {
  name: string;
}

export function NewFunnel({ onClose, created }: { onClose: () => void; created: () => void }) {
  const [name, setName] = useState('');
  const [steps, setSteps] = useState<Step[]>(() => [
    { ...emptyTarget(), name: '', kind: 'path', path: '/' },
    { ...emptyTarget(), name: '' },
  ]);
  const [hours, setHours] = useState('24');
  const set = (i: number, next: Step) => setSteps(steps.map((s, j) => (j === i ? next : s)));
  const submit = async () => {
    must(
      await api.POST('/v0/funnels', {
        params: { header: once() },
        body: {
          name,
          steps: steps.map((s) => ({ ...(s.name ? { name: s.name } : {}), ...targetBody(s) })),
          ...(hours ? { windowHours: Number(hours) } : {}),
        },
      }),
    );
    created();
  };
  return (
    <Section title="New funnel">
      <ApiForm label="New funnel" submitLabel="Create funnel" onSubmit={submit} notice="Funnel created.">
        <Field name="name" label="Funnel name" value={name} onInput={setName} required maxLength={255} />
        <fieldset class="group">
          <legend>Steps, in the order a visitor takes them</legend>
          {steps.map((s, i) => (
            <fieldset key={i} class="item">
              <legend>Step {i + 1}</legend>
              <Field
                name="name"
                label={`Step ${i + 1} name`}
                pointer={`/steps/${i}/name`}
                value={s.name}
                onInput={(v) => set(i, { ...s, name: v })}
                maxLength={255}
                hint="Optional: what it counts, in words, unless given"
              />
              <TargetFields target={s} onChange={(t) => set(i, { ...s, ...t })} prefix={`/steps/${i}`} label={`Step ${i + 1} counts`} />
              {steps.length > 2 && (
                <button type="button" class="secondary" onClick={() => setSteps(steps.filter((_, j) => j !== i))}>
                  Remove step {i + 1}
                </button>
              )}
            </fieldset>
          ))}
          {steps.length < 8 && (
            <button type="button" class="secondary" onClick={() => setSteps([...steps, { ...emptyTarget(), name: '' }])}>
              Add a step
            </button>
          )}
        </fieldset>
        <Field
          kind="number"
          name="windowHours"
          label="Hours to finish"
          value={hours}
          onInput={setHours}
          hint="Every step must follow the first within this many hours (1 to 720)"
        />
      </ApiForm>
      <button type="button" class="secondary" onClick={onClose}>
        Cancel
      </button>
    </Section>
  );
}
