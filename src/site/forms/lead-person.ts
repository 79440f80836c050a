import type { Transaction } from 'kysely';
import { lockExclusive } from '../../db/locks.js';
import type { Database } from '../../db/types.js';
import { isFreeMailDomain } from '../../enrichment/free-mail.js';
import { createPerson, emailDomain, findPersonByEmail, getPerson } from '../../persons/repository.js';
import type { LeadFields } from '../../render/document.js';

/** Whose a lead is, and how that was decided (the log entry says which). */
export interface LeadOwner {
  personId: string;
  /** The link's person when the lead is someone else's: the page that person was sent still influenced the lead. */
  viaPersonId: string | null;
  matchedBy: 'email' | 'link' | 'new';
}

/**
 * The person who filled the form (issue 36), not the person whose link it was on:
 * 1. the tenant's person with the submitted email, ignoring case (the oldest when several share it);
 * 2. else, when the link's person has no email yet, the link's person (likely the one it was sent to);
 * 3. else a new person with the lead's name, email and phone, and the email's domain as `domain`,
 *    which links them to the account of that domain (`createPerson` emits `person.created`); a
 *    free-mail domain (gmail.com) names no company, so it is no person's `domain` (issue 39).
 * An existing person is never written to: a visitor may type anyone's address, so what they typed
 * is a claim, kept on the lead and in the log, never a fact about the person. Leads of one email
 * take turns under a lock of it, so two at once make one person.
 */
export async function leadPerson(
  trx: Transaction<Database>,
  tenantId: string,
  lead: LeadFields,
  linkPersonId: string | null,
): Promise<LeadOwner> {
  await lockExclusive(trx, `lead-email:${tenantId}:${lead.email.toLowerCase()}`);
  const link = linkPersonId === null ? undefined : await getPerson(trx, tenantId, linkPersonId);
  const via = (personId: string) => (link && link.personId !== personId ? link.personId : null);
  const found = await findPersonByEmail(trx, tenantId, lead.email);
  if (found) return { personId: found.id, viaPersonId: via(found.id), matchedBy: 'email' };
  if (link && !link.email) return { personId: link.personId, viaPersonId: null, matchedBy: 'link' };
  const domain = emailDomain(lead.email);
  const person = await createPerson(trx, tenantId, {
    name: lead.name,
    email: lead.email,
    ...(domain && !isFreeMailDomain(domain) ? { domain } : {}),
    ...(lead.phone ? { phoneNumber: lead.phone } : {}),
  });
  return { personId: person.personId, viaPersonId: via(person.personId), matchedBy: 'new' };
}
