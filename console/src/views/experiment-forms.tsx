import { useState } from 'preact/hooks';
import { api, type components, must, once } from '../api.js';
import { Section, useLoad } from '../components.js';
import { ApiForm, Field, useExactProblems } from '../form.js';
import { href } from '../router.js';

// Making an experiment (docs/experiments.md): a holdout (the personalised pages against the page
// itself, arms fixed by the API) or versions of one audience's page (2 to 8 arms, each a draft or
// published version); weights; fixed or bandit allocation; the units each arm needs.

type ExperimentCreate = components['schemas']['ExperimentCreate'];
type Kind = ExperimentCreate['kind'];

interface ArmInput {
  key: string;
  weight: string;
  versionId: string;
}

const HOLDOUT_ARMS: ArmInput[] = [
  { key: 'control', weight: '50', versionId: '' },
  { key: 'personalised', weight: '50', versionId: '' },
];

/** The page's audiences (the first 100), and the versions an arm may serve: drafts and the published one. */
function useAudiences(pageId: string) {
  return useLoad(
    async () =>
      must(await api.GET('/v0/pages/{page_id}/audiences', { params: { path: { page_id: pageId }, query: { limit: 100 } } })).items,
    [pageId],
  );
}
function useVersions(pageId: string, audienceId: string) {
  return useLoad(async () => {
    if (!audienceId) return [];
    const page = must(
      await api.GET('/v0/pages/{page_id}/audiences/{audience_id}/versions', {
        params: { path: { page_id: pageId, audience_id: audienceId }, query: { limit: 50 } },
      }),
    );
    return page.items.filter((v) => v.status === 'draft' || v.status === 'published');
  }, [pageId, audienceId]);
}

function ArmsProblems() {
  const messages = useExactProblems('/arms');
  return messages.length ? <p class="error field-error">{messages.join('; ')}</p> : null;
}

export function NewExperiment({ pageId, onClose }: { pageId: string; onClose: () => void }) {
  const [name, setName] = useState('');
  const [kind, setKind] = useState<Kind>('holdout');
  const [audienceId, setAudienceId] = useState('');
  const [arms, setArms] = useState<ArmInput[]>(HOLDOUT_ARMS);
  const [allocation, setAllocation] = useState<'fixed' | 'bandit'>('fixed');
  const [minimum, setMinimum] = useState('');
  const audiences = useAudiences(pageId);
  const versions = useVersions(pageId, kind === 'versions' ? audienceId : '');
  const setArm = (i: number, patch: Partial<ArmInput>) => setArms(arms.map((a, j) => (j === i ? { ...a, ...patch } : a)));
  const chooseKind = (next: Kind) => {
    setKind(next);
    // A versions experiment's audience may be any; a holdout's only a segment.
    setAudienceId('');
    setArms(
      next === 'holdout'
        ? HOLDOUT_ARMS
        : [
            { key: 'current', weight: '50', versionId: '' },
            { key: 'new', weight: '50', versionId: '' },
          ],
    );
  };
  const submit = async () => {
    const body: ExperimentCreate = {
      name,
      kind,
      allocation,
      arms: arms.map((a) => ({
        key: a.key,
        weight: Number(a.weight),
        ...(kind === 'versions' && a.versionId ? { versionId: a.versionId } : {}),
      })),
      ...(audienceId ? { audienceId } : {}),
      ...(minimum ? { minimumUnitsPerArm: Number(minimum) } : {}),
    };
    const made = must(await api.POST('/v0/pages/{page_id}/experiments', { params: { path: { page_id: pageId }, header: once() }, body }));
    location.hash = href('pages', pageId, 'experiments', made.experimentId);
  };
  const versionOptions: [string, string][] = [
    ['', 'Choose a version'],
    ...(versions.data ?? []).map((v): [string, string] => [v.versionId, `Version ${v.versionNumber} (${v.status})`]),
  ];
  return (
    <Section title="New experiment">
      <ApiForm label="New experiment" submitLabel="Create experiment" onSubmit={submit} notice="Created.">
        <Field name="name" label="Experiment name" value={name} onInput={setName} required maxLength={255} />
        <Field
          kind="select"
          name="kind"
          label="What is compared"
          value={kind}
          onInput={(v) => chooseKind(v as Kind)}
          options={[
            ['holdout', 'Holdout: personalised pages against the page itself'],
            ['versions', "Versions of one audience's page"],
          ]}
          hint={
            kind === 'holdout'
              ? 'Every audience with a person or an account: some visitors see the plain page (control), the rest their own (personalised)'
              : 'Each arm serves one version (a draft or the published one) of the audience you choose'
          }
        />
        {kind === 'holdout' && (
          <Field
            kind="select"
            name="audienceId"
            label="Who is held out"
            value={audienceId}
            onInput={setAudienceId}
            options={[
              ['', 'Every audience with a person'],
              ...(audiences.data ?? [])
                .filter((a) => a.rules !== null && a.archivedAt === null && !a.flags.includes('home_page'))
                .map((a): [string, string] => [a.audienceId, `${a.effectiveName} (segment)`]),
            ]}
            hint={
              audienceId ? "The segment's visitors: control sees the page as everyone sees it, the rest the segment's version" : undefined
            }
          />
        )}
        {kind === 'versions' && (
          <Field
            kind="select"
            name="audienceId"
            label="Audience"
            value={audienceId}
            onInput={setAudienceId}
            options={[['', 'Choose an audience'], ...(audiences.data ?? []).map((a): [string, string] => [a.audienceId, a.effectiveName])]}
          />
        )}
        <fieldset class="group">
          <legend>Arms and their share of visitors</legend>
          <ArmsProblems />
          {arms.map((a, i) => (
            <fieldset key={i} class="item">
              <legend>{kind === 'holdout' ? a.key : `Arm ${i + 1}`}</legend>
              {kind === 'versions' && (
                <>
                  <Field
                    name="key"
                    label={`Arm ${i + 1} name`}
                    pointer={`/arms/${i}/key`}
                    value={a.key}
                    onInput={(v) => setArm(i, { key: v })}
                    maxLength={40}
                    hint="Lower-case letters, digits and dashes: bold-headline"
                  />
                  <Field
                    kind="select"
                    name="versionId"
                    label={`Arm ${i + 1} version`}
                    pointer={`/arms/${i}/versionId`}
                    value={a.versionId}
                    onInput={(v) => setArm(i, { versionId: v })}
                    options={versionOptions}
                  />
                </>
              )}
              <Field
                kind="number"
                name="weight"
                label={`Weight of ${kind === 'holdout' ? a.key : `arm ${i + 1}`}`}
                pointer={`/arms/${i}/weight`}
                value={a.weight}
                onInput={(v) => setArm(i, { weight: v })}
                hint="1 to 10,000: its share is its weight over the sum of weights"
              />
              {kind === 'versions' && arms.length > 2 && (
                <button type="button" class="secondary" onClick={() => setArms(arms.filter((_, j) => j !== i))}>
                  Remove arm {i + 1}
                </button>
              )}
            </fieldset>
          ))}
          {kind === 'versions' && arms.length < 8 && (
            <button
              type="button"
              class="secondary"
              onClick={() => setArms([...arms, { key: `arm-${arms.length + 1}`, weight: '50', versionId: '' }])}
            >
              Add an arm
            </button>
          )}
        </fieldset>
        <Field
          kind="select"
          name="allocation"
          label="How visitors are split"
          value={allocation}
          onInput={(v) => setAllocation(v as 'fixed' | 'bandit')}
          options={[
            ['fixed', 'Fixed: by the weights above'],
            ['bandit', 'Bandit: more visitors to the arm doing best, as results come in'],
          ]}
        />
        <Field
          kind="number"
          name="minimumUnitsPerArm"
          label="Visitors each arm needs before a decision"
          value={minimum}
          onInput={setMinimum}
          hint="Optional; 100 unless given (minimumUnitsPerArm)"
        />
      </ApiForm>
      <button type="button" class="secondary" onClick={onClose}>
        Cancel
      </button>
    </Section>
  );
}
