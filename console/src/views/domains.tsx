import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api, must, once, succeeded, type TenantDomain } from '../api.js';
import { Badge, LoadMore, Section, Status, useCursorList, When, WriteButton } from '../components.js';
import { ApiForm, Field } from '../form.js';

// Domains: add one, see the DNS records to create (the TXT proof that it is the tenant's, and the
// CNAME or A record that sends its visitors here), "Check now" (POST verify), and its status. A record not found yet is the API's 409, said beside the button. The fallback domain is always verified and cannot be removed.

/** One DNS record to create, as a table a person copies from: `data` names it for tests and styles. */
function DnsRecord(props: { caption: string; data: Record<string, string>; type: string; name: string; value: ComponentChildren }) {
  return (
    <table class="record" {...props.data}>
      <caption>{props.caption}</caption>
      <thead>
        <tr>
          <th scope="col">Type</th>
          <th scope="col">Name</th>
          <th scope="col">Value</th>
        </tr>
      </thead>
      <tbody>
        <tr>
          <td>{props.type}</td>
          <td>
            <code>{props.name}</code>
          </td>
          <td>{props.value}</td>
        </tr>
      </tbody>
    </table>
  );
}

function Proof({ domain }: { domain: TenantDomain }) {
  if (!domain.verification) return null;
  const { recordType, name, value } = domain.verification;
  return (
    <DnsRecord
      caption={`DNS record to create for ${domain.hostname}`}
      data={{ 'data-record': domain.hostname }}
      type={recordType}
      name={name}
      value={<code>{value}</code>}
    />
  );
}

/** The record that sends visitors here; without SITE_CNAME_TARGET, the API says to point the name at your proxy. */
function Routing({ domain }: { domain: TenantDomain }) {
  if (!domain.routing) return null;
  const { recordType, name, value, instructions } = domain.routing;
  return (
    <DnsRecord
      caption={`DNS record that sends visitors to ${domain.hostname}`}
      data={{ 'data-routing': domain.hostname }}
      type={value === null ? `${recordType} (or A)` : recordType}
      name={name}
      value={value === null ? instructions : <code>{value}</code>}
    />
  );
}

export function DomainsView() {
  const domains = useCursorList(
    async (cursor) => must(await api.GET('/v0/tenant_domains', { params: { query: { limit: 50, ...(cursor ? { cursor } : {}) } } })),
    [],
  );
  const [hostname, setHostname] = useState('');
  const [notice, setNotice] = useState('');
  const add = async () => {
    must(await api.POST('/v0/tenant_domains', { params: { header: once() }, body: { hostname } }));
    setHostname('');
    domains.reload();
  };
  return (
    <Section title="Domains">
      <ApiForm label="Add a domain" submitLabel="Add domain" onSubmit={add} notice="Added: create its DNS records, then check it.">
        <Field
          name="hostname"
          label="Domain name"
          value={hostname}
          onInput={setHostname}
          maxLength={253}
          hint="A host name, like go.example.com (an https:// address is taken as its host)"
        />
      </ApiForm>
      <output aria-live="polite">{notice}</output>
      <Status loaded={domains}>
        <ul class="cards">
          {domains.items.map((d) => (
            <li key={d.tenantDomainId} data-domain={d.hostname}>
              <h3>
                {d.hostname} <Badge value={d.status} /> {d.isFallback && <span class="muted small">fallback</span>}
              </h3>
              <p class="muted small">
                Added <When at={d.createdAt} />
                {d.verifiedAt && (
                  <>
                    , verified <When at={d.verifiedAt} />
                  </>
                )}
              </p>
              <Proof domain={d} />
              <Routing domain={d} />
              <div class="actions">
                {d.status === 'pending' && (
                  <WriteButton
                    label="Check now"
                    name={`Check now ${d.hostname}`}
                    action={async () =>
                      must(
                        await api.POST('/v0/tenant_domains/{tenant_domain_id}/verify', {
                          params: { path: { tenant_domain_id: d.tenantDomainId }, header: once() },
                        }),
                      )
                    }
                    done={(result) => {
                      const checked = result as TenantDomain;
                      setNotice(
                        checked.status === 'verified' ? `${d.hostname} is verified.` : `${d.hostname}: the record is not there yet.`,
                      );
                      domains.reload();
                    }}
                  />
                )}
                {!d.isFallback && (
                  <WriteButton
                    label="Remove"
                    name={`Remove ${d.hostname}`}
                    kind="danger"
                    confirm={`Remove ${d.hostname}? Its links stop being served.`}
                    action={async () =>
                      succeeded(
                        await api.DELETE('/v0/tenant_domains/{tenant_domain_id}', {
                          params: { path: { tenant_domain_id: d.tenantDomainId } },
                        }),
                      )
                    }
                    done={domains.reload}
                  />
                )}
              </div>
            </li>
          ))}
        </ul>
        <LoadMore list={domains} />
      </Status>
    </Section>
  );
}
