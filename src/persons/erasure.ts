import { sql, type Kysely, type Transaction } from 'kysely';
import { archiveErased, eraseAudiencesOf } from '../audiences/erasure.js';
import { bump } from '../db/counters.js';
import { slugify } from '../db/slugs.js';
import type { Database } from '../db/types.js';
import { emit } from '../events/outbox.js';
import { mentionsOf, type Mentions } from './mentions.js';
import { forgetSessions } from './erasure-sessions.js';
import { deleteLeadsOf } from '../leads/repository.js';

/**
 * Erasure of a person (the right to be forgotten): afterwards the service holds none of their
 * personal data. One transaction, so it happens whole or not at all:
 * - the person, all their log entries and their leads are removed;
 * - the audiences made for them (whose person they are) lose every name, override and version
 *   content (generated text included), are archived for good, and their links answer 410;
 * - visits lose what mentions them (form data, titles, addresses, UTM values), not their counts;
 * - every stored event that mentions them (their id, name, email, phone or LinkedIn URL, or one
 *   of those audiences, anywhere in it, ignoring case) is replaced by `{"redacted": true,
 *   "personId": ...}`, which is also what pending deliveries send;
 * - remembered answers of idempotent requests that mention them are forgotten, and delivery
 *   errors that quote them are cleared;
 * - `person.deleted` carries the id only.
 * docs/privacy.md says what this cannot recall (deliveries already made) and what stays on disk.
 */
export async function erasePerson(trx: Transaction<Database>, tenantId: string, personId: string): Promise<boolean> {
  const person = await trx
    .selectFrom('persons')
    .select(['id', 'name', 'email', 'phone_number', 'linkedin_profile_url'])
    .where('id', '=', personId)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  if (!person) return false;
  const theirs = [person.id, person.name, person.email, person.phone_number, person.linkedin_profile_url];
  // What refers to the person goes first: the foreign keys hold until the end.
  await trx.deleteFrom('person_logs').where('tenant_id', '=', tenantId).where('owner_id', '=', personId).execute();
  await deleteLeadsOf(trx, tenantId, personId);
  const audiences = await eraseAudiencesOf(trx, tenantId, personId);
  await trx.deleteFrom('persons').where('id', '=', personId).execute();
  await bump(trx, tenantId, 'persons', -1);
  await forgetSessions(
    trx,
    tenantId,
    mentionsOf(theirs),
    audiences.map((a) => a.id),
  );

  const mentions = mentionsOf([...theirs, ...audiences.map((a) => a.id)]);
  const redacted = JSON.stringify({ redacted: true, personId });
  for (const id of await mentioning(trx, 'events', 'payload', tenantId, mentions)) {
    await trx.updateTable('events').set({ payload: redacted }).where('id', '=', id).execute();
  }
  for (const key of await mentioningKeys(trx, tenantId, mentions)) {
    await trx
      .deleteFrom('idempotency_keys')
      .where('tenant_id', '=', tenantId)
      .where('scope', '=', key.scope)
      .where('key', '=', key.key)
      .execute();
  }
  for (const id of await mentioning(trx, 'webhook_deliveries', 'last_error', tenantId, mentions)) {
    await trx.updateTable('webhook_deliveries').set({ last_error: 'redacted' }).where('id', '=', id).execute();
  }
  await forgetSlugBase(trx, tenantId, slugify(person.name, 'person'));
  // After the redaction: these events name no one, and must stay.
  await archiveErased(trx, audiences);
  await emit(trx, tenantId, 'person.deleted', { personId });
  return true;
}

const BATCH = 500;

/**
 * The ids of `table`'s rows of the tenant whose `column` mentions the person: read in batches in
 * id order, narrowed by SQL and decided by `mentions.test`.
 */
async function mentioning(
  trx: Transaction<Database>,
  table: 'events' | 'webhook_deliveries',
  column: 'payload' | 'last_error',
  tenantId: string,
  mentions: Mentions,
): Promise<string[]> {
  const found: string[] = [];
  let last = '';
  for (;;) {
    const rows = await trx
      .selectFrom(table)
      .select(['id', sql<string | null>`${sql.ref(column)}`.as('text')])
      .where('tenant_id', '=', tenantId)
      .where('id', '>', last)
      .where(mentions.mayMention(column))
      .orderBy('id')
      .limit(BATCH)
      .execute();
    for (const row of rows) if (mentions.test(row.text)) found.push(row.id);
    const end = rows.at(-1);
    if (!end || rows.length < BATCH) return found;
    last = end.id;
  }
}

/** Remembered idempotent requests whose key or answer mentions the person (few: they live 24 hours). */
async function mentioningKeys(trx: Transaction<Database>, tenantId: string, mentions: Mentions) {
  const rows = await trx
    .selectFrom('idempotency_keys')
    .select(['scope', 'key', 'response_body'])
    .where('tenant_id', '=', tenantId)
    .where((eb) => eb.or([mentions.mayMention('key'), mentions.mayMention('response_body')]))
    .execute();
  return rows.filter((r) => mentions.test(r.key) || mentions.test(r.response_body));
}

/**
 * The slug counter keeps the slug base (the name, slugified) of every name ever used. Once no
 * person of the tenant uses that base any more, it goes too; allocation still checks for a free slug.
 */
async function forgetSlugBase(trx: Kysely<Database>, tenantId: string, base: string): Promise<void> {
  const user = await trx
    .selectFrom('persons')
    .select('id')
    .where('tenant_id', '=', tenantId)
    // A slug base holds only a-z, 0-9 and '-': nothing in it is a LIKE wildcard.
    .where((eb) => eb.or([eb('slug', '=', base), eb('slug', 'like', `${base}-%`)]))
    .limit(1)
    .executeTakeFirst();
  if (!user) {
    await trx.deleteFrom('slug_counters').where('scope', '=', `person:${tenantId}`).where('base', '=', base).execute();
  }
}
