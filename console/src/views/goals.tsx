import { useState } from 'preact/hooks';
import { api, type components, must, succeeded } from '../api.js';
import { ListTable, LoadMore, Section, Status, useCursorList, When, WriteButton } from '../components.js';
import { OpenButton } from '../form.js';
import { KIND_WORDS, NewFunnel, NewGoal } from './goal-forms.js';
import { plural } from '../words.js';

// Goals and funnels: what the site counts as success, made and removed here (their numbers are
// on the Site view). Deleting either is confirmed first.

type Goal = components['schemas']['Goal'];
type Funnel = components['schemas']['Funnel'];
type Counted = Pick<Goal, 'kind' | 'pageId' | 'actionPurpose' | 'path' | 'eventName'>;

/** What a goal or step counts, in a sentence. */
export function countsText(t: Counted): string {
  const kind = KIND_WORDS.find(([k]) => k === t.kind)?.[1] ?? t.kind;
  if (t.kind === 'action' && t.actionPurpose) return `${kind}: ${t.actionPurpose}`;
  if (t.kind === 'path' && t.path) return `${kind}: ${t.path}`;
  if (t.kind === 'event' && t.eventName) return `${kind}: ${t.eventName}`;
  if (t.kind === 'form' && t.pageId) return `${kind} on one page`;
  return kind;
}

function Goals() {
  const [adding, setAdding] = useState(false);
  const goals = useCursorList(
    async (cursor) => must(await api.GET('/v0/goals', { params: { query: { limit: 50, ...(cursor ? { cursor } : {}) } } })),
    [],
  );
  return (
    <Section title="Goals">
      {adding ? (
        <NewGoal
          onClose={() => setAdding(false)}
          created={() => {
            setAdding(false);
            goals.reload();
          }}
        />
      ) : (
        <OpenButton label="New goal" onClick={() => setAdding(true)} />
      )}
      <ListTable
        list={goals}
        empty="No goals yet."
        caption="Goals"
        columns={['Goal', 'What counts', 'Created', '']}
        row={(g) => (
          <tr key={g.goalId} data-goal={g.goalId}>
            <td>{g.name}</td>
            <td>{countsText(g)}</td>
            <td>
              <When at={g.createdAt} />
            </td>
            <td>
              <WriteButton
                label="Delete"
                name={`Delete goal ${g.name}`}
                kind="danger"
                confirm={`Delete the goal “${g.name}”? Reports stop counting it.`}
                action={async () => succeeded(await api.DELETE('/v0/goals/{goal_id}', { params: { path: { goal_id: g.goalId } } }))}
                done={goals.reload}
              />
            </td>
          </tr>
        )}
      />
    </Section>
  );
}

function Funnels() {
  const [adding, setAdding] = useState(false);
  const funnels = useCursorList(
    async (cursor) => must(await api.GET('/v0/funnels', { params: { query: { limit: 50, ...(cursor ? { cursor } : {}) } } })),
    [],
  );
  return (
    <Section title="Funnels">
      {adding ? (
        <NewFunnel
          onClose={() => setAdding(false)}
          created={() => {
            setAdding(false);
            funnels.reload();
          }}
        />
      ) : (
        <OpenButton label="New funnel" onClick={() => setAdding(true)} />
      )}
      <Status loaded={funnels}>
        {funnels.items.length === 0 ? (
          <p>No funnels yet.</p>
        ) : (
          <ul class="funnels">
            {funnels.items.map((f: Funnel) => (
              <li key={f.funnelId} data-funnel={f.funnelId}>
                <strong>{f.name}</strong> <span class="muted small">within {plural('hour', f.windowHours)}</span>
                <ol>
                  {f.steps.map((s, i) => (
                    // Steps have no id; their order is what they are.
                    <li key={i}>
                      {s.name} <span class="muted small">({countsText(s)})</span>
                    </li>
                  ))}
                </ol>
                <WriteButton
                  label="Delete"
                  name={`Delete funnel ${f.name}`}
                  kind="danger"
                  confirm={`Delete the funnel “${f.name}”?`}
                  action={async () =>
                    succeeded(await api.DELETE('/v0/funnels/{funnel_id}', { params: { path: { funnel_id: f.funnelId } } }))
                  }
                  done={funnels.reload}
                />
              </li>
            ))}
          </ul>
        )}
        <LoadMore list={funnels} />
      </Status>
    </Section>
  );
}

export function GoalsView() {
  return (
    <>
      <h1>Goals and funnels</h1>
      <p class="muted">What counts as success on your pages. Their numbers are on the Site view.</p>
      <Goals />
      <Funnels />
    </>
  );
}
