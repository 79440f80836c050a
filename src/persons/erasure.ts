import type { Kysely, Transaction } from 'kysely';
import { archiveErased, eraseAudiencesOf } from '../audiences/index.js';
import { bump } from '../db/counters.js';
import { type Mentions, mentionsOf } from '../db/mentions.js';
import { forgetSlugBase, slugify } from '../db/slugs.js';
import type { Database } from '../db/types.js';
import { redactEventsMentioning, emit } from '../events/index.js';
import { forgetKeysMentioning } from '../http/idempotency.js';
import { deleteLogsOf, forgetTypedLeads } from '../logs/index.js';
import { forgetOccurrencesNaming, forgetSessions } from '../visits/index.js';
import { redactDeliveryErrors } from '../webhooks/index.js';
import { forgetInOtherPersons } from './erasure-others.js';

/**
 * The leads' part of an erasure (leads/repository.ts `forgetLeadsOf`), handed in by app.ts and the
 * CLI: the lead rules (leads/record.ts) make persons, so leads/ sits above persons/.
 */
export type ForgetLeads = (trx: Transaction<Database>, tenantId: string, personId: string, mentions: Mentions) => Promise<void>;

/**
 * Erasure of a person (the right to be forgotten): afterwards the service holds none of their
 * personal data. One transaction, so it happens whole or not at all:
 * - the person, all their log entries and their leads are removed; other leads forget them
 *   (as the link's person, or in what a visitor typed, on the lead and in its log entry);
 * - the audiences made for them (whose person they are) lose every name, override and version
 *   content (generated text included), are archived for good, and their links answer 410;
 * - visits lose what mentions them (form data, titles, addresses, UTM values, tracked event names
 *   and action purposes), not their counts;
 * - every stored event that mentions them (their id, name, email, phone or LinkedIn URL, or one
 *   of those audiences, anywhere in it, ignoring case) is replaced by `{"redacted": true,
 *   "personId": ...}`, which is also what pending deliveries send;
 * - remembered answers of idempotent requests that mention them are forgotten, and delivery
 *   errors that quote them are cleared;
 * - another person's fields lose the erased person's email, phone or LinkedIn URL (a visitor may
 *   have typed it as their name), with a new slug where the old one was made of it;
 * - `person.deleted` carries the id only.
 * docs/privacy.md says what this cannot recall (deliveries already made) and what stays on disk.
 */
export async function erasePerson(
  trx: Transaction<Database>,
  tenantId: string,
  personId: string,
  forgetLeadsOf: ForgetLeads,
): Promise<boolean> {
  const person = await trx
    .selectFrom('persons')
    .select(['id', 'name', 'email', 'phone_number', 'linkedin_profile_url'])
    .where('id', '=', personId)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  if (!person) return false;
  const theirs = [person.id, person.name, person.email, person.phone_number, person.linkedin_profile_url];
  // What refers to the person goes first: the foreign keys hold until the end.
  await deleteLogsOf(trx, 'person', tenantId, personId);
  await forgetLeadsOf(trx, tenantId, personId, mentionsOf(theirs));
  await forgetTypedLeads(trx, tenantId, mentionsOf(theirs));
  const audiences = await eraseAudiencesOf(trx, tenantId, personId);
  await trx.deleteFrom('persons').where('id', '=', personId).execute();
  await bump(trx, tenantId, 'persons', -1);
  await forgetSessions(
    trx,
    tenantId,
    mentionsOf(theirs),
    audiences.map((a) => a.id),
  );
  await forgetOccurrencesNaming(trx, tenantId, mentionsOf(theirs));
  await forgetInOtherPersons(trx, tenantId, person);

  const mentions = mentionsOf([...theirs, ...audiences.map((a) => a.id)]);
  await redactEventsMentioning(trx, tenantId, mentions, JSON.stringify({ redacted: true, personId }));
  await forgetKeysMentioning(trx, tenantId, mentions);
  await redactDeliveryErrors(trx, tenantId, mentions);
  await forgetPersonSlugBase(trx, tenantId, slugify(person.name, 'person'));
  // After the redaction: these events name no one, and must stay.
  await archiveErased(trx, audiences);
  await emit(trx, tenantId, 'person.deleted', { personId });
  return true;
}

/**
 * The slug counter keeps the slug base (the name, slugified) of every name ever used. Once no
 * person of the tenant uses that base any more, it goes too; allocation still checks for a free slug.
 */
async function forgetPersonSlugBase(trx: Kysely<Database>, tenantId: string, base: string): Promise<void> {
  const user = await trx
    .selectFrom('persons')
    .select('id')
    .where('tenant_id', '=', tenantId)
    // A slug base holds only a-z, 0-9 and '-': nothing in it is a LIKE wildcard.
    .where((eb) => eb.or([eb('slug', '=', base), eb('slug', 'like', `${base}-%`)]))
    .limit(1)
    .executeTakeFirst();
  if (!user) await forgetSlugBase(trx, `person:${tenantId}`, base);
}
