import { useState } from 'preact/hooks';
import { type Account, api, must, once, type Person, succeeded } from '../api.js';
import { Section } from '../components.js';
import { ApiForm, Field, TypedConfirm } from '../form.js';
import { href } from '../router.js';

// Creating and editing persons and accounts, and erasing a person (confirmed by typing the name).

const orNull = (value: string) => (value.trim() === '' ? null : value);

export function PersonForm({ person, done }: { person?: Person; done: (person: Person) => void }) {
  const [name, setName] = useState(person?.name ?? '');
  const [email, setEmail] = useState(person?.email ?? '');
  const [domain, setDomain] = useState(person?.domain ?? '');
  const [phoneNumber, setPhone] = useState(person?.phoneNumber ?? '');
  const [linkedinProfileUrl, setLinkedin] = useState(person?.linkedinProfileUrl ?? '');
  const submit = async () => {
    if (person)
      done(
        must(
          await api.PATCH('/v0/persons/{person_id}', {
            params: { path: { person_id: person.personId } },
            body: {
              name,
              email: orNull(email),
              domain: orNull(domain),
              phoneNumber: orNull(phoneNumber),
              linkedinProfileUrl: orNull(linkedinProfileUrl),
            },
          }),
        ),
      );
    else {
      const optional = { email, domain, phoneNumber, linkedinProfileUrl };
      const body = { name, ...Object.fromEntries(Object.entries(optional).filter(([, v]) => v.trim() !== '')) };
      done(must(await api.POST('/v0/persons', { params: { header: once() }, body })));
    }
  };
  return (
    <ApiForm label={person ? 'Edit person' : 'New person'} submitLabel={person ? 'Save' : 'Create person'} onSubmit={submit}>
      <Field name="name" label="Name" value={name} onInput={setName} required maxLength={255} />
      <Field kind="email" name="email" label="Email" value={email} onInput={setEmail} maxLength={255} />
      <Field
        name="domain"
        label="Company domain"
        value={domain}
        onInput={setDomain}
        maxLength={255}
        hint="Like acme.com: links the person to that account"
      />
      <Field
        kind="tel"
        name="phoneNumber"
        label="Phone number"
        value={phoneNumber}
        onInput={setPhone}
        maxLength={64}
        hint="As you would write it: +44 20 7183 8750, or (415) 555-0100 in the brand's default country. Saved as +14155550100."
      />
      <Field kind="url" name="linkedinProfileUrl" label="LinkedIn profile" value={linkedinProfileUrl} onInput={setLinkedin} />
    </ApiForm>
  );
}

export function ErasePerson({ person }: { person: Person }) {
  return (
    <Section title="Erase">
      <p>Erasing deletes the person, their logs and what their visits and forms recorded of them. It cannot be undone.</p>
      <TypedConfirm
        word={person.name}
        label="Erase this person"
        action={async () => succeeded(await api.DELETE('/v0/persons/{person_id}', { params: { path: { person_id: person.personId } } }))}
        done={() => {
          location.hash = href('persons');
        }}
      />
    </Section>
  );
}

export function AccountForm({ account, done }: { account?: Account; done: (account: Account) => void }) {
  const [name, setName] = useState(account?.name ?? '');
  const [domain, setDomain] = useState(account?.domain ?? '');
  const submit = async () =>
    done(
      account
        ? must(
            await api.PATCH('/v0/accounts/{account_id}', { params: { path: { account_id: account.accountId } }, body: { name, domain } }),
          )
        : must(await api.POST('/v0/accounts', { params: { header: once() }, body: { name, domain } })),
    );
  return (
    <ApiForm label={account ? 'Edit account' : 'New account'} submitLabel={account ? 'Save' : 'Create account'} onSubmit={submit}>
      <Field name="name" label="Name" value={name} onInput={setName} required maxLength={255} />
      <Field name="domain" label="Company domain" value={domain} onInput={setDomain} required maxLength={255} hint="Like acme.com" />
    </ApiForm>
  );
}
