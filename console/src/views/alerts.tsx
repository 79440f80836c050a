import { useState } from 'preact/hooks';
import { api, must, once, succeeded } from '../api.js';
import { ListTable, Badge, Section, useCursorList, WriteButton } from '../components.js';
import { accountSearch, pageSearch, useSearch } from '../choices.js';
import { ApiForm, Field, OpenButton } from '../form.js';
import { Picker } from '../picker.js';
import { plural } from '../words.js';

// Sales alerts in Slack: who is on the site or filled a form, at most one message per alert,
// account and hour. Made, paused, tested and deleted here; the accounts and pages an alert watches
// are picked by name (their ids are in the hint), or left empty for any.

const EVENTS: [string, string][] = [
  ['visit.started', 'Someone opens their own link'],
  ['form.submitted', 'Someone fills a form'],
];
const said = (event: string) => EVENTS.find(([e]) => e === event)?.[1] ?? event;
const idList = (ids: string[]): string[] | null => (ids.length > 0 ? ids : null);

function NewAlert({ created }: { created: () => void }) {
  const [name, setName] = useState('');
  const [webhookUrl, setWebhookUrl] = useState('');
  const [event, setEvent] = useState('visit.started');
  const [accounts, setAccounts] = useState<string[]>([]);
  const [pages, setPages] = useState<string[]>([]);
  const pagesNamed = useSearch(pageSearch);
  const submit = async () => {
    must(
      await api.POST('/v0/alerts', {
        params: { header: once() },
        body: {
          name,
          channel: { type: 'slack', webhookUrl },
          when: { event: event as 'visit.started', accountIds: idList(accounts), pageIds: idList(pages) },
        },
      }),
    );
    created();
  };
  return (
    <Section title="New alert">
      <ApiForm label="New alert" submitLabel="Create alert" onSubmit={submit} notice="Created.">
        <Field name="name" label="Alert name" value={name} onInput={setName} maxLength={200} required />
        <Field
          kind="url"
          name="webhookUrl"
          pointer="/channel/webhookUrl"
          label="Slack webhook address"
          hint="From Slack: Apps → Incoming Webhooks → Add to a channel (https://hooks.slack.com/services/…)"
          value={webhookUrl}
          onInput={setWebhookUrl}
          maxLength={2048}
          required
        />
        <Field kind="select" name="event" pointer="/when/event" label="Tell me when" options={EVENTS} value={event} onInput={setEvent} />
        <Picker
          multiple
          name="accountIds"
          pointer="/when/accountIds"
          label="Only these accounts"
          empty="Any account"
          value={accounts}
          onChange={setAccounts}
          search={accountSearch}
        />
        <Picker
          multiple
          name="pageIds"
          pointer="/when/pageIds"
          label="Only these pages"
          empty="Any page"
          value={pages}
          onChange={setPages}
          search={pagesNamed}
        />
      </ApiForm>
    </Section>
  );
}

export function AlertsView() {
  const alerts = useCursorList(
    async (cursor) => must(await api.GET('/v0/alerts', { params: { query: { limit: 50, ...(cursor ? { cursor } : {}) } } })),
    [],
  );
  const [adding, setAdding] = useState(false);
  const [notice, setNotice] = useState('');
  return (
    <Section title="Sales alerts">
      <p class="muted">A message in Slack when a target account is on your pages: at most one per alert, account and hour.</p>
      {adding ? (
        <NewAlert
          created={() => {
            setAdding(false);
            alerts.reload();
          }}
        />
      ) : (
        <OpenButton label="New alert" onClick={() => setAdding(true)} />
      )}
      <output aria-live="polite">{notice}</output>
      <ListTable
        list={alerts}
        empty="No alerts yet."
        columns={['Alert', 'When', 'State', '']}
        row={(a) => {
          const path = { alert_id: a.alertId };
          return (
            <tr key={a.alertId} data-alert={a.alertId}>
              <td>{a.name}</td>
              <td>
                {said(a.when.event)}
                {a.when.accountIds && <span class="muted small"> · {plural('account', a.when.accountIds.length)}</span>}
                {a.when.pageIds && <span class="muted small"> · {plural('page', a.when.pageIds.length)}</span>}
              </td>
              <td>
                <Badge value={a.active ? 'active' : 'paused'} />
              </td>
              <td class="actions">
                <WriteButton
                  label="Send a test"
                  name={`Send a test to ${a.name}`}
                  action={async () => must(await api.POST('/v0/alerts/{alert_id}/test', { params: { path, header: once() }, body: {} }))}
                  done={() => setNotice(`A test message is on its way to the channel of "${a.name}".`)}
                />
                <WriteButton
                  label={a.active ? 'Pause' : 'Resume'}
                  name={`${a.active ? 'Pause' : 'Resume'} ${a.name}`}
                  action={async () => must(await api.PATCH('/v0/alerts/{alert_id}', { params: { path }, body: { active: !a.active } }))}
                  done={alerts.reload}
                />
                <WriteButton
                  label="Delete"
                  name={`Delete ${a.name}`}
                  kind="danger"
                  confirm={`Delete the alert "${a.name}"? Its channel gets no more messages.`}
                  action={async () => succeeded(await api.DELETE('/v0/alerts/{alert_id}', { params: { path } }))}
                  done={alerts.reload}
                />
              </td>
            </tr>
          );
        }}
      />
    </Section>
  );
}
