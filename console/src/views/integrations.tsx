import { useState } from 'preact/hooks';
import { api, must, once, type Schema } from '../api.js';
import { ListTable, Badge, Section, useCursorList, When, WriteButton } from '../components.js';
import { ApiForm, Field, OpenButton } from '../form.js';

// CRM integrations (issue 40): connect HubSpot or Salesforce, see how the last sync went, run one
// now, pause or resume. Credentials go to the API and are never shown again: the API never returns them.

type Integration = Schema<'Integration'>;
type Provider = Integration['provider'];

const NAMES: Record<Provider, string> = { hubspot: 'HubSpot', salesforce: 'Salesforce' };

function Connect({ connected }: { connected: () => void }) {
  const [provider, setProvider] = useState<Provider>('hubspot');
  const [accessToken, setAccessToken] = useState('');
  const [clientId, setClientId] = useState('');
  const [clientSecret, setClientSecret] = useState('');
  const [instanceUrl, setInstanceUrl] = useState('');
  const submit = async () => {
    const body = provider === 'hubspot' ? { provider, accessToken } : { provider, clientId, clientSecret, instanceUrl };
    must(await api.POST('/v0/integrations', { params: { header: once() }, body }));
    setAccessToken('');
    setClientSecret('');
    connected();
  };
  return (
    <Section title="Connect a CRM">
      <ApiForm label="Connect a CRM" submitLabel="Connect" onSubmit={submit} notice="Connected. The first sync starts now.">
        <Field
          kind="select"
          name="provider"
          label="CRM"
          value={provider}
          onInput={(v) => setProvider(v as Provider)}
          options={[
            ['hubspot', 'HubSpot'],
            ['salesforce', 'Salesforce'],
          ]}
        />
        {provider === 'hubspot' ? (
          <Field
            kind="password"
            name="accessToken"
            label="Private app access token"
            value={accessToken}
            onInput={setAccessToken}
            maxLength={1024}
            hint="Scopes: crm.objects.contacts.read and .write, crm.objects.deals.read, crm.objects.companies.read, crm.schemas.contacts.read."
          />
        ) : (
          <>
            <Field
              kind="url"
              name="instanceUrl"
              label="My Domain address"
              value={instanceUrl}
              onInput={setInstanceUrl}
              maxLength={2048}
              hint="https://yourcompany.my.salesforce.com"
            />
            <Field name="clientId" label="Consumer key" value={clientId} onInput={setClientId} maxLength={1024} />
            <Field
              kind="password"
              name="clientSecret"
              label="Consumer secret"
              value={clientSecret}
              onInput={setClientSecret}
              maxLength={1024}
            />
          </>
        )}
      </ApiForm>
    </Section>
  );
}

function Row({ integration, changed }: { integration: Integration; changed: () => void }) {
  const path = { integration_id: integration.integrationId };
  const active = integration.status === 'active';
  return (
    <tr data-integration={integration.integrationId}>
      <td>{NAMES[integration.provider]}</td>
      <td>
        <Badge value={integration.status} />
      </td>
      <td>
        <When at={integration.lastSyncAt} />
      </td>
      <td>{integration.lastError ?? '—'}</td>
      <td class="num">{integration.counts.leadsPushed}</td>
      <td class="num">{integration.counts.dealsSynced}</td>
      <td>
        <div class="actions">
          {active && (
            <WriteButton
              label={`Sync ${NAMES[integration.provider]} now`}
              action={async () =>
                must(await api.POST('/v0/integrations/{integration_id}/sync', { params: { path, header: once() }, body: {} }))
              }
              done={changed}
            />
          )}
          <WriteButton
            label={active ? `Pause ${NAMES[integration.provider]}` : `Resume ${NAMES[integration.provider]}`}
            confirm={active ? 'Pause this integration? Nothing is sent or read until it is resumed.' : undefined}
            action={async () =>
              must(
                await api.PATCH('/v0/integrations/{integration_id}', { params: { path }, body: { status: active ? 'paused' : 'active' } }),
              )
            }
            done={changed}
          />
        </div>
      </td>
    </tr>
  );
}

export function IntegrationsView() {
  const list = useCursorList(
    async (cursor) => must(await api.GET('/v0/integrations', { params: { query: { limit: 50, ...(cursor ? { cursor } : {}) } } })),
    [],
  );
  const [adding, setAdding] = useState(false);
  return (
    <Section title="Integrations">
      <p class="muted">
        Leads go to your CRM as contacts or leads, once each (never a lead sent with Global Privacy Control); deals come back from it.
      </p>
      {adding ? <Connect connected={list.reload} /> : <OpenButton label="Connect a CRM" onClick={() => setAdding(true)} />}
      <ListTable
        list={list}
        empty="No CRM connected."
        columns={['CRM', 'Status', 'Last sync', 'Last error', 'Leads sent', 'Deals read', '']}
        row={(i) => <Row key={`${i.integrationId}-${i.updatedAt}-${i.lastSyncAt}`} integration={i} changed={list.reload} />}
      />
    </Section>
  );
}
