import { useState } from 'preact/hooks';
import { api, must } from '../api.js';
import { LoadMore, Section, Status, useCursorList, useLoad, When } from '../components.js';
import { LogTimeline } from '../log-timeline.js';
import { href } from '../router.js';
import { OpenButton } from '../form.js';
import { AccountActivity } from './account-activity.js';
import { AccountForm, ErasePerson, PersonForm } from './people-forms.js';

function SearchForm({ label, onSearch }: { label: string; onSearch: (query: string) => void }) {
  const [text, setText] = useState('');
  return (
    <form
      class="controls"
      onSubmit={(e) => {
        e.preventDefault();
        onSearch(text.trim());
      }}
    >
      <label>
        {label} <input type="search" name="query" value={text} onInput={(e) => setText(e.currentTarget.value)} maxLength={255} />
      </label>
      <button type="submit" class="secondary">
        Search
      </button>
    </form>
  );
}

/** Persons found by the API's search (name, email or domain); a person id opens that person directly. */
export function PersonsView() {
  const [query, setQuery] = useState('');
  const [adding, setAdding] = useState(false);
  const persons = useCursorList(
    async (cursor) =>
      must(
        await api.GET('/v0/persons/search', {
          params: { query: { limit: 50, ...(query ? { query } : {}), ...(cursor ? { cursor } : {}) } },
        }),
      ),
    [query],
  );
  const shown = persons.items;
  const search = (value: string) => {
    if (/^person_[0-9a-z]{26}$/.test(value)) {
      location.hash = href('persons', value);
      return;
    }
    setQuery(value);
  };
  return (
    <Section title="Persons">
      {adding ? (
        <PersonForm done={(p) => (location.hash = href('persons', p.personId))} />
      ) : (
        <OpenButton label="New person" onClick={() => setAdding(true)} />
      )}
      <SearchForm label="Name, email, domain or id" onSearch={search} />
      <Status loaded={persons}>
        {shown.length === 0 ? (
          <p>No persons match.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Email</th>
                <th scope="col">Domain</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((p) => (
                <tr key={p.personId}>
                  <td>
                    <a href={href('persons', p.personId)}>{p.name}</a>
                  </td>
                  <td>{p.email ?? '—'}</td>
                  <td>{p.domain ?? '—'}</td>
                  <td>
                    <When at={p.createdAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <LoadMore list={persons} />
      </Status>
    </Section>
  );
}

export function PersonView({ personId }: { personId: string }) {
  const person = useLoad(
    async () => must(await api.GET('/v0/persons/{person_id}', { params: { path: { person_id: personId } } })),
    [personId],
  );
  return (
    <Status loaded={person}>
      {person.data && (
        <article>
          <p class="crumbs">
            <a href={href('persons')}>Persons</a> /
          </p>
          <h1>{person.data.name}</h1>
          <dl class="facts">
            <dt>Email</dt>
            <dd>{person.data.email ?? '—'}</dd>
            <dt>Domain</dt>
            <dd>{person.data.domain ?? '—'}</dd>
            <dt>Phone</dt>
            <dd>{person.data.phoneNumber ?? '—'}</dd>
            <dt>Created</dt>
            <dd>
              <When at={person.data.createdAt} />
            </dd>
          </dl>
          <details class="editor">
            <summary>Edit</summary>
            <PersonForm key={person.data.updatedAt} person={person.data} done={person.reload} />
          </details>
          <LogTimeline owner={{ personId }} />
          <ErasePerson person={person.data} />
        </article>
      )}
    </Status>
  );
}

export function AccountsView() {
  const [query, setQuery] = useState('');
  const [adding, setAdding] = useState(false);
  const accounts = useCursorList(
    async (cursor) =>
      must(
        await api.GET('/v0/accounts/search', {
          params: { query: { limit: 50, ...(query ? { query } : {}), ...(cursor ? { cursor } : {}) } },
        }),
      ),
    [query],
  );
  return (
    <Section title="Accounts">
      {adding ? (
        <AccountForm done={(a) => (location.hash = href('accounts', a.accountId))} />
      ) : (
        <OpenButton label="New account" onClick={() => setAdding(true)} />
      )}
      <SearchForm label="Name or domain" onSearch={setQuery} />
      <Status loaded={accounts}>
        {accounts.items.length === 0 ? (
          <p>No accounts match.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Domain</th>
                <th scope="col">Persons</th>
                <th scope="col">Latest activity</th>
              </tr>
            </thead>
            <tbody>
              {accounts.items.map((a) => (
                <tr key={a.accountId}>
                  <td>
                    <a href={href('accounts', a.accountId)}>{a.name}</a>
                  </td>
                  <td>{a.domain}</td>
                  <td class="num">{a.linkedPersonsCount}</td>
                  <td>
                    <When at={a.latestActivityAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <LoadMore list={accounts} />
      </Status>
    </Section>
  );
}

export function AccountView({ accountId }: { accountId: string }) {
  const account = useLoad(
    async () => must(await api.GET('/v0/accounts/{account_id}', { params: { path: { account_id: accountId } } })),
    [accountId],
  );
  return (
    <Status loaded={account}>
      {account.data && (
        <article>
          <p class="crumbs">
            <a href={href('accounts')}>Accounts</a> /
          </p>
          <h1>{account.data.name}</h1>
          <dl class="facts">
            <dt>Domain</dt>
            <dd>{account.data.domain}</dd>
          </dl>
          <details class="editor">
            <summary>Edit</summary>
            <AccountForm key={account.data.updatedAt} account={account.data} done={account.reload} />
          </details>
          <AccountActivity accountId={accountId} domain={account.data.domain} />
          <LogTimeline owner={{ accountId }} />
        </article>
      )}
    </Status>
  );
}
