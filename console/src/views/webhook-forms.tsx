import { useState } from 'preact/hooks';
import { api, type EventType, must, once, type Subscription } from '../api.js';
import { Section, WriteButton } from '../components.js';
import { ApiForm, Field, useProblems } from '../form.js';
import { href } from '../router.js';

// Writing webhook subscriptions: create one, edit its URL and events, pause or resume it, and
// rotate its secret, which the API shows once: the console shows it once too, and forgets it.

const EVENTS = [
  'page.created',
  'page.updated',
  'page.deleted',
  'audience.created',
  'audience.updated',
  'audience.archived',
  'audience.restored',
  'audience_version.created',
  'audience_version.updated',
  'audience_version.status_changed',
  'page.version.published',
  'audience_session.created',
  'form.submitted',
  'form.enriched',
  'form.enrichment_failed',
  'asset.created',
  'asset.updated',
  'asset.deleted',
  'topic.created',
  'topic.updated',
  'topic.deleted',
  'topic_entry.created',
  'topic_entry.updated',
  'topic_entry.deleted',
  'person.created',
  'person.updated',
  'person.deleted',
  'person_log.created',
  'person_log.updated',
  'person_log.deleted',
  'account.created',
  'account.updated',
  'account.deleted',
  'account_log.created',
  'account_log.updated',
  'account_log.deleted',
  'page_link.created',
  'page_link.updated',
  'page_link.deleted',
  'template.created',
  'template.deleted',
  'tenant_domain.verified',
  'tenant_domain.released',
  'experiment.started',
  'experiment.concluded',
  'deal.created',
  'deal.updated',
  'deal.deleted',
  'visit.started',
  'session.ended',
  'deal.created',
  'deal.updated',
  'deal.deleted',
  'integration.failed',
  '*',
] as const satisfies readonly EventType[];
// The catalogue is the API's: a new event type that is not listed here fails the console's type check.
const complete: [Exclude<EventType, (typeof EVENTS)[number]>] extends [never] ? true : false = true;
void complete;

function Events({ value, onChange }: { value: EventType[]; onChange: (next: EventType[]) => void }) {
  const messages = useProblems('/events');
  return (
    <fieldset class="group events" aria-invalid={messages.length > 0 ? 'true' : undefined}>
      <legend>Events to send</legend>
      {EVENTS.map((e) => (
        <label key={e} class="choice">
          <input
            type="checkbox"
            name="events"
            value={e}
            checked={value.includes(e)}
            onChange={(ev) => onChange(ev.currentTarget.checked ? [...value, e] : value.filter((x) => x !== e))}
          />{' '}
          {e === '*' ? '* (every event)' : e}
        </label>
      ))}
      {messages.length > 0 && <span class="error field-error">{messages.join('; ')}</span>}
    </fieldset>
  );
}

/** The secret, shown once after a create or a rotation. */
export function SecretOnce({ secret }: { secret: string | undefined }) {
  if (!secret) return null;
  return (
    <div class="secret" role="status">
      <p>
        The signing secret, shown this once: copy it now. <code data-secret="">{secret}</code>
      </p>
    </div>
  );
}

export function NewSubscription() {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<EventType[]>([]);
  const [secret, setSecret] = useState<string>();
  const [created, setCreated] = useState<string>();
  const submit = async () => {
    const made = must(await api.POST('/v0/webhook_subscriptions', { params: { header: once() }, body: { url, events } }));
    setSecret(made.secret);
    setCreated(made.subscriptionId);
  };
  return (
    <Section title="New subscription">
      <ApiForm label="New subscription" submitLabel="Create subscription" onSubmit={submit} notice="Created.">
        <Field kind="url" name="url" label="Address to send events to" value={url} onInput={setUrl} maxLength={2048} hint="https://…" />
        <Events value={events} onChange={setEvents} />
      </ApiForm>
      <SecretOnce secret={secret} />
      {created && <a href={href('webhooks', created)}>Open the new subscription</a>}
    </Section>
  );
}

export function EditSubscription({ subscription, changed }: { subscription: Subscription; changed: () => void }) {
  const [url, setUrl] = useState(subscription.url);
  const [events, setEvents] = useState<EventType[]>(subscription.events as EventType[]);
  const [secret, setSecret] = useState<string>();
  const path = { subscription_id: subscription.subscriptionId };
  const patch = async (body: { url?: string; events?: EventType[]; active?: boolean }) =>
    must(await api.PATCH('/v0/webhook_subscriptions/{subscription_id}', { params: { path }, body }));
  return (
    <>
      <div class="actions">
        <WriteButton
          label={subscription.active ? 'Pause' : 'Resume'}
          confirm={subscription.active ? 'Pause this subscription? Events are not delivered while it is paused.' : undefined}
          action={() => patch({ active: !subscription.active })}
          done={changed}
        />
        <WriteButton
          label="Rotate the secret"
          confirm="Rotate the signing secret? The old one stops being used for new deliveries."
          action={async () =>
            must(
              await api.POST('/v0/webhook_subscriptions/{subscription_id}/rotate_secret', { params: { path, header: once() }, body: {} }),
            )
          }
          done={(result) => setSecret((result as { secret: string }).secret)}
        />
      </div>
      <SecretOnce secret={secret} />
      <details class="editor">
        <summary>Edit the URL and events</summary>
        <ApiForm
          label="Edit subscription"
          onSubmit={async () => {
            await patch({ url, events });
            changed();
          }}
        >
          <Field kind="url" name="url" label="Address to send events to" value={url} onInput={setUrl} maxLength={2048} />
          <Events value={events} onChange={setEvents} />
        </ApiForm>
      </details>
    </>
  );
}
