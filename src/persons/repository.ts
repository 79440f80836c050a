import { sql, type Kysely, type Transaction } from 'kysely';
import { refreshPersonAudiences } from '../audiences/index.js';
import { bump, counter } from '../db/counters.js';
import { byTenantAndId, tenantAndIdIn } from '../db/batch.js';
import { prepared } from '../db/prepared.js';
import { containsAsciiFolded } from '../db/search/index.js';
import { allocateSlug, reserveSlug, slugify } from '../db/slugs.js';
import { emit } from '../events/index.js';
import type { Database, PersonsTable } from '../db/types.js';
import { keysetList, NEWEST_FIRST } from '../http/pagination.js';
import { newId } from '../ids.js';
import { after, now } from '../time.js';
import { settle } from '../http/round-trip.js';
import { invalidField } from '../http/errors.js';
import { E164, normalisePhone } from '../phone.js';
import { defaultCountryOf } from '../site-settings/index.js';
import type { Person, PersonCreate, PersonListQuery, PersonSearchQuery } from './schemas.js';
import { PersonUpdate } from './schemas.js';

export const toPerson = (row: PersonsTable): Person => ({
  personId: row.id,
  name: row.name,
  email: row.email,
  domain: row.domain,
  slug: row.slug,
  phoneNumber: row.phone_number,
  linkedinProfileUrl: row.linkedin_profile_url,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/**
 * A phone number as typed → E.164, or 400 at `/phoneNumber` in words. The tenant's country is read
 * only for a value not already in E.164.
 */
async function storedPhone(db: Kysely<Database>, tenantId: string, value: string): Promise<string> {
  if (E164.test(value)) return value;
  const phone = normalisePhone(value, await defaultCountryOf(db, tenantId));
  if (!phone.ok) throw invalidField('/phoneNumber', phone.message);
  return phone.e164;
}

const slugOf = (db: Kysely<Database>, tenantId: string) =>
  [`person:${tenantId}`, async (slug: string) => (await personBySlug(db, { tenantId, slug })).length > 0] as const;

/** A slug for a person named `name`, taken before the create's transaction (db/slugs.ts `reserveSlug`). */
export function reservePersonSlug(db: Kysely<Database>, tenantId: string, name: string): Promise<string | undefined> {
  const [scope, taken] = slugOf(db, tenantId);
  return reserveSlug(db, scope, slugify(name, 'person'), taken);
}

export async function createPerson(trx: Transaction<Database>, tenantId: string, given: PersonCreate, reserved?: string): Promise<Person> {
  const input = given.phoneNumber === undefined ? given : { ...given, phoneNumber: await storedPhone(trx, tenantId, given.phoneNumber) };
  const [scope, taken] = slugOf(trx, tenantId);
  const slug = reserved ?? (await allocateSlug(trx, scope, slugify(input.name, 'person'), taken));
  const createdAt = now();
  const row: PersonsTable = {
    id: newId('person'),
    tenant_id: tenantId,
    name: input.name,
    email: input.email ?? null,
    domain: input.domain ?? null,
    domain_lc: input.domain?.toLowerCase() ?? null,
    slug,
    phone_number: input.phoneNumber ?? null,
    linkedin_profile_url: input.linkedinProfileUrl ?? null,
    created_at: createdAt,
    updated_at: createdAt,
  };
  await insertPerson(trx, row);
  const person = toPerson(row);
  await emit(trx, tenantId, 'person.created', person);
  // Last: the tenant's counter row stays locked until the commit, so it is held for the least time.
  await bump(trx, tenantId, 'persons');
  return person;
}

export async function getPerson(db: Kysely<Database>, tenantId: string, personId: string): Promise<Person | undefined> {
  const row = await readPerson(db, { tenantId, id: personId });
  return row && toPerson(row);
}

async function findPerson(db: Kysely<Database>, tenantId: string, personId: string) {
  return (await personById(db, { tenantId, personId }))[0];
}

/** Reading one person by id, the hottest read: concurrent requests share a statement on PostgreSQL (db/batch.ts). */
const readPerson = byTenantAndId(
  (db, key) => personById(db, { tenantId: key.tenantId, personId: key.id }),
  (db, keys) => personsByIds(db, keys),
);

// The hot paths, compiled once (see db/prepared.ts).
const personById = prepared((db, p: { tenantId: string; personId: string }) =>
  db.selectFrom('persons').selectAll().where('id', '=', p.personId).where('tenant_id', '=', p.tenantId),
);
const personsByIds = prepared((db, p: { tenantIds: string[]; ids: string[] }) =>
  db.selectFrom('persons').selectAll().where(tenantAndIdIn(p.tenantIds, p.ids)),
);
const personBySlug = prepared((db, p: { tenantId: string; slug: string }) =>
  db.selectFrom('persons').select('id').where('tenant_id', '=', p.tenantId).where('slug', '=', p.slug),
);
const insertPerson = prepared((db, p: PersonsTable) =>
  db.insertInto('persons').values({
    id: p.id,
    tenant_id: p.tenant_id,
    name: p.name,
    email: p.email,
    domain: p.domain,
    domain_lc: p.domain_lc,
    slug: p.slug,
    phone_number: p.phone_number,
    linkedin_profile_url: p.linkedin_profile_url,
    created_at: p.created_at,
    updated_at: p.updated_at,
  }),
);

/**
 * Undefined when the person does not exist; an empty patch returns the person unchanged.
 * Only the fields present are written, so concurrent patches of different fields both land.
 */
export async function updatePerson(
  trx: Transaction<Database>,
  tenantId: string,
  personId: string,
  body: PersonUpdate,
): Promise<Person | undefined> {
  const current = await findPerson(trx, tenantId, personId);
  if (!current) return undefined;
  const shown = toPerson(current);
  const typed = body.phoneNumber;
  const normalised = typeof typed === 'string' ? { ...body, phoneNumber: await storedPhone(trx, tenantId, typed) } : body;
  const patch = settle(PersonUpdate, normalised, shown);
  if (Object.keys(patch).length === 0) return shown;
  const changes: Partial<PersonsTable> = { updated_at: after(current.updated_at) };
  if (patch.name !== undefined) changes.name = patch.name;
  if (patch.email !== undefined) changes.email = patch.email;
  if (patch.domain !== undefined) {
    changes.domain = patch.domain;
    changes.domain_lc = patch.domain?.toLowerCase() ?? null;
  }
  if (patch.phoneNumber !== undefined) changes.phone_number = patch.phoneNumber;
  if (patch.linkedinProfileUrl !== undefined) changes.linkedin_profile_url = patch.linkedinProfileUrl;
  const row = await trx
    .updateTable('persons')
    .set(changes)
    .where('id', '=', personId)
    .where('tenant_id', '=', tenantId)
    .returningAll()
    .executeTakeFirst();
  if (!row) return undefined;
  if (patch.name !== undefined || patch.domain !== undefined) {
    await refreshPersonAudiences(trx, tenantId, personId, { name: row.name, domain: row.domain });
  }
  const person = toPerson(row);
  await emit(trx, tenantId, 'person.updated', person);
  return person;
}

const personsList = keysetList({ name: 'persons', table: 'persons', ...NEWEST_FIRST });

export async function listPersons(db: Kysely<Database>, tenantId: string, query: PersonListQuery) {
  const rows = db.selectFrom('persons').selectAll().where('tenant_id', '=', tenantId);
  return personsList.read({ query, rows, count: () => counter(db, tenantId, 'persons'), map: toPerson });
}

/**
 * The tenant's person with this email, ignoring case (the oldest, should several share it); served
 * by the index on the lowercased email. Both sides are folded by the database's own `lower`, so
 * they are folded alike (SQLite folds ASCII letters only, PostgreSQL by its locale).
 */
export async function findPersonByEmail(db: Kysely<Database>, tenantId: string, email: string) {
  return db
    .selectFrom('persons')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where(sql<string>`lower(email)`, '=', sql<string>`lower(${email})`)
    .orderBy('created_at')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
}

/** The domain part of an email address: what links a person to an account (`domain`, matched ignoring case). */
export const emailDomain = (email: string): string | undefined => {
  const at = email.lastIndexOf('@');
  return at > 0 && at < email.length - 1 ? email.slice(at + 1) : undefined;
};

/**
 * Persons whose name, email or domain contains the text (A-Z folded), newest first: what the
 * console's pickers ask instead of loading every person. Persons have no substring index (accounts,
 * links and audiences do), so this walks the tenant's persons in list order; see docs/decisions.md.
 */
export async function searchPersons(db: Kysely<Database>, tenantId: string, query: PersonSearchQuery) {
  const text = (query.query ?? '').trim();
  let rows = db.selectFrom('persons').selectAll().where('tenant_id', '=', tenantId);
  if (text !== '')
    rows = rows.where((eb) =>
      eb.or([containsAsciiFolded('name', text), containsAsciiFolded('email', text), containsAsciiFolded('domain', text)]),
    );
  const count = text === '' ? () => counter(db, tenantId, 'persons') : rows.clearSelect();
  return personsList.read({ query, filters: { text: text.toLowerCase() }, rows, count, map: toPerson });
}

/** The persons of these ids, any tenant (the agent's batch spans tenants). */
export async function personRowsByIds(db: Kysely<Database>, ids: readonly string[]): Promise<PersonsTable[]> {
  return ids.length === 0 ? [] : db.selectFrom('persons').selectAll().where('id', 'in', ids).execute();
}

/** The name of the tenant's person, if it is there (an erased person is gone). */
export async function personNameOf(db: Kysely<Database>, tenantId: string, personId: string): Promise<string | undefined> {
  const row = await db.selectFrom('persons').select('name').where('tenant_id', '=', tenantId).where('id', '=', personId).executeTakeFirst();
  return row?.name;
}

/** The tenant a person belongs to, found by its id alone (the operator's CLI knows no tenant). */
export async function tenantOfPerson(db: Kysely<Database>, personId: string): Promise<string | undefined> {
  const row = await db.selectFrom('persons').select('tenant_id').where('id', '=', personId).executeTakeFirst();
  return row?.tenant_id;
}
