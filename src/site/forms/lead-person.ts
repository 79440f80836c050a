import type { Transaction } from 'kysely';
import { lockExclusive } from '../../db/locks.js';
import type { Database } from '../../db/types.js';
import { createPerson, emailDomain, findPersonByEmail, updatePerson } from '../../persons/repository.js';
import type { PersonUpdate } from '../../persons/schemas.js';
import type { LeadFields } from '../../render/document.js';

/**
 * The person a lead on a visit without one is (issue 29): the tenant's person with the lead's email,
 * ignoring case, else a new person with the lead's name, email and phone, and the email's domain
 * as their `domain`, which links them to the account of that domain as the person API does
 * (`createPerson` emits `person.created`). A person found keeps their name and email; a phone or a
 * domain they lack is filled from the lead (`person.updated`). Leads of one email take turns, so
 * two at once make one person.
 */
export async function leadPerson(trx: Transaction<Database>, tenantId: string, lead: LeadFields): Promise<string> {
  await lockExclusive(trx, `lead-email:${tenantId}:${lead.email.toLowerCase()}`);
  const domain = emailDomain(lead.email);
  const found = await findPersonByEmail(trx, tenantId, lead.email);
  if (!found) {
    const person = await createPerson(trx, tenantId, {
      name: lead.name,
      email: lead.email,
      ...(domain ? { domain } : {}),
      ...(lead.phone ? { phoneNumber: lead.phone } : {}),
    });
    return person.personId;
  }
  const fill: PersonUpdate = {};
  if (found.phone_number === null && lead.phone) fill.phoneNumber = lead.phone;
  if (found.domain === null && domain) fill.domain = domain;
  if (Object.keys(fill).length > 0) await updatePerson(trx, tenantId, found.id, fill);
  return found.id;
}
