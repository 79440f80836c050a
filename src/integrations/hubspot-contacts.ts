import { escapeHtml } from 'markdown-it/lib/common/utils.mjs';
import type { LeadToPush } from './leads.js';

/**
 * Leads to HubSpot contacts, without ever letting a visitor rewrite a contact (issue 45): anyone
 * can type anyone's email into a form, so the portal is asked first which emails it has
 * (`POST /crm/v3/objects/contacts/batch/read` by email; a 207 lists the missing ones as errors).
 * - A new email is created with what was typed (`batch/upsert`, for the new ones alone).
 * - An existing contact keeps every value it has: only its empty `firstname`, `lastname`, `phone`
 *   or `company` is filled (`batch/update`), with `pam_last_page` and `pam_last_audience`.
 * - What was typed and differs goes on a note associated with the contact (`POST
 *   /crm/v3/objects/notes`, association type 202, note to contact): the page, the time, the values.
 */
export type HubSpotCall = <T>(method: 'GET' | 'POST', path: string, json?: unknown) => Promise<T>;

/** The contact properties a lead carries, and how a note names them. */
const TYPED = { firstname: 'First name', lastname: 'Last name', phone: 'Phone', company: 'Company' } as const;
type Typed = keyof typeof TYPED;
const TYPED_NAMES = Object.keys(TYPED) as Typed[];
/** HubSpot's default note-to-contact association type. */
export const NOTE_TO_CONTACT = 202;

interface ContactsRead {
  results?: { id: string | number; properties?: Record<string, string | null> }[];
}
interface Known {
  id: string;
  values: Partial<Record<Typed, string>>;
}

const typedOf = (lead: LeadToPush): Record<Typed, string> => ({
  firstname: lead.firstName.trim(),
  lastname: lead.lastName.trim(),
  phone: lead.phone.trim(),
  company: lead.company.trim(),
});

/** The same value written another way ("ada  LOVELACE" and "Ada Lovelace") is no change worth a note. */
const same = (a: string, b: string): boolean => a.trim().replace(/\s+/g, ' ').toLowerCase() === b.trim().replace(/\s+/g, ' ').toLowerCase();

/** A note's body is HubSpot rich text (HTML): what a visitor typed is escaped, never markup. */
function noteBody(lead: LeadToPush, differing: [Typed, string][]): string {
  const page = lead.pageName === '' ? 'a page' : lead.pageName;
  const items = differing.map(([name, value]) => `<li>${TYPED[name]}: ${escapeHtml(value)}</li>`).join('');
  return (
    `<p>Form on ${escapeHtml(page)} at ${escapeHtml(lead.submittedAt)}. ` +
    `Typed there and different from this contact's values, which were left unchanged:</p><ul>${items}</ul>`
  );
}

export async function pushContacts(call: HubSpotCall, leads: LeadToPush[], has: Set<string>): Promise<string[]> {
  if (leads.length === 0) return [];
  const emails = [...new Set(leads.map((l) => l.email.toLowerCase()))];
  const read = await call<ContactsRead>('POST', '/crm/v3/objects/contacts/batch/read', {
    idProperty: 'email',
    properties: ['email', ...TYPED_NAMES],
    inputs: emails.map((id) => ({ id })),
  });
  const known = new Map<string, Known>();
  for (const result of read.results ?? []) {
    const email = result.properties?.email?.toLowerCase();
    if (!email) continue;
    const values: Partial<Record<Typed, string>> = {};
    for (const name of TYPED_NAMES) values[name] = result.properties?.[name]?.trim() ?? '';
    known.set(email, { id: String(result.id), values });
  }

  const pam = (lead: LeadToPush): Record<string, string> => {
    const properties: Record<string, string> = {};
    if (has.has('pam_last_page') && lead.pageName !== '') properties.pam_last_page = lead.pageName;
    if (has.has('pam_last_audience') && lead.audienceName !== '') properties.pam_last_audience = lead.audienceName;
    return properties;
  };
  const creates: { id: string; idProperty: 'email'; properties: Record<string, string> }[] = [];
  const creating = new Set<string>();
  const updates = new Map<string, Record<string, string>>();
  const notes: unknown[] = [];
  const pushed: string[] = [];
  for (const lead of leads) {
    const email = lead.email.toLowerCase();
    const typed = typedOf(lead);
    const contact = known.get(email);
    if (!contact) {
      // A second lead of an email this batch creates waits for the next round, when the contact
      // exists and is read: it then fills or notes like any other, and never overwrites the first.
      if (creating.has(email)) continue;
      creating.add(email);
      const properties: Record<string, string> = { email: lead.email };
      // An empty value would clear what the CRM holds: only what the lead says is sent.
      for (const name of TYPED_NAMES) if (typed[name] !== '') properties[name] = typed[name];
      creates.push({ id: lead.email, idProperty: 'email', properties: { ...properties, ...pam(lead) } });
      pushed.push(lead.leadId);
      continue;
    }
    const update = updates.get(contact.id) ?? {};
    const differing: [Typed, string][] = [];
    for (const name of TYPED_NAMES) {
      const value = typed[name];
      if (value === '') continue;
      const held = contact.values[name] ?? '';
      if (held === '') {
        update[name] = value;
        contact.values[name] = value;
      } else if (!same(held, value)) differing.push([name, value]);
    }
    Object.assign(update, pam(lead));
    if (Object.keys(update).length > 0) updates.set(contact.id, update);
    if (differing.length > 0) {
      notes.push({
        properties: { hs_timestamp: lead.submittedAt, hs_note_body: noteBody(lead, differing) },
        associations: [{ to: { id: contact.id }, types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: NOTE_TO_CONTACT }] }],
      });
    }
    pushed.push(lead.leadId);
  }

  if (creates.length > 0) await call('POST', '/crm/v3/objects/contacts/batch/upsert', { inputs: creates });
  if (updates.size > 0) {
    const inputs = [...updates].map(([id, properties]) => ({ id, properties }));
    await call('POST', '/crm/v3/objects/contacts/batch/update', { inputs });
  }
  for (const note of notes) await call('POST', '/crm/v3/objects/notes', note);
  return pushed;
}
