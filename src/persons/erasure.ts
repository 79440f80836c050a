import { sql, type Kysely, type Transaction } from 'kysely';
import { computedName } from '../audiences/names.js';
import { bump } from '../db/counters.js';
import { contains } from '../db/search/index.js';
import { slugify } from '../db/slugs.js';
import type { Database } from '../db/types.js';
import { emit } from '../events/outbox.js';
import { after } from '../time.js';

/**
 * Erasure of a person (the right to be forgotten): afterwards the service holds none of their
 * personal data. One transaction, so it happens whole or not at all:
 * - the person and all their log entries are removed;
 * - audiences that named them no longer do, and their computed names are recomputed;
 * - visits whose form submission carries their email or phone keep their counts, not the form data;
 * - every stored event that mentions them (by id, email, phone, or their name as a JSON value) is
 *   replaced by `{"redacted": true, "personId": ...}`, which is also what pending deliveries send;
 * - remembered answers of idempotent requests that mention them are forgotten;
 * - `person.deleted` carries the id only.
 * docs/privacy.md says what this cannot recall (deliveries already made).
 */
export async function erasePerson(trx: Transaction<Database>, tenantId: string, personId: string): Promise<boolean> {
  const person = await trx
    .selectFrom('persons')
    .select(['id', 'name', 'email', 'phone_number'])
    .where('id', '=', personId)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  if (!person) return false;
  // What refers to the person goes first: the foreign keys hold until the end.
  await trx.deleteFrom('person_logs').where('tenant_id', '=', tenantId).where('owner_id', '=', personId).execute();
  await unlinkAudiences(trx, tenantId, personId);
  await trx.deleteFrom('persons').where('id', '=', personId).execute();
  await bump(trx, tenantId, 'persons', -1);
  await blankForms(trx, tenantId, person.email, person.phone_number);

  const mentions = [personId, person.email, person.phone_number, ...jsonStrings(person.name)].filter(
    (v): v is string => typeof v === 'string' && v.length > 0,
  );
  // Any of them, as a substring (the stored text's own case: each value is matched as stored).
  const mentioning = (column: string) =>
    sql<boolean>`(${sql.join(
      mentions.map((m) => contains(column, m)),
      sql` or `,
    )})`;
  await trx
    .updateTable('events')
    .set({ payload: JSON.stringify({ redacted: true, personId }) })
    .where('tenant_id', '=', tenantId)
    .where(mentioning('payload'))
    .execute();
  await trx.deleteFrom('idempotency_keys').where('tenant_id', '=', tenantId).where(mentioning('response_body')).execute();
  await forgetSlugBase(trx, tenantId, slugify(person.name, 'person'));
  await emit(trx, tenantId, 'person.deleted', { personId });
  return true;
}

async function unlinkAudiences(trx: Transaction<Database>, tenantId: string, personId: string): Promise<void> {
  const audiences = await trx
    .selectFrom('audiences')
    .select(['id', 'number', 'custom_name', 'updated_at'])
    .where('tenant_id', '=', tenantId)
    .where('person_id', '=', personId)
    .execute();
  for (const a of audiences) {
    const computed = computedName(a.number);
    const effective = a.custom_name ?? computed;
    await trx
      .updateTable('audiences')
      .set({
        person_id: null,
        computed_name: computed,
        effective_name: effective,
        effective_name_lc: effective.toLowerCase(),
        updated_at: after(a.updated_at),
      })
      .where('id', '=', a.id)
      .execute();
  }
}

/** Matched case-insensitively for emails (as mail systems do), exactly for phone numbers. */
async function blankForms(trx: Transaction<Database>, tenantId: string, email: string | null, phone: string | null) {
  if (!email && !phone) return;
  await trx
    .updateTable('audience_sessions')
    .set({ form_submission_email: '', form_submission_phone: '', form_submission_identifier: '' })
    .where('tenant_id', '=', tenantId)
    .where((eb) =>
      eb.or([
        ...(email ? [eb(eb.fn('lower', ['form_submission_email']), '=', email.toLowerCase())] : []),
        ...(phone ? [eb('form_submission_phone', '=', phone)] : []),
      ]),
    )
    .execute();
}

/** The name as it appears inside stored JSON: a whole value, or the start of a computed name `Name (domain)`. */
function jsonStrings(name: string): string[] {
  const quoted = JSON.stringify(name);
  return [quoted, `${quoted.slice(0, -1)} (`];
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
