import type { Kysely, Transaction } from 'kysely';
import { accountOfDomain } from '../accounts/index.js';
import { lockExclusive } from '../db/locks.js';
import type { Database } from '../db/types.js';
import { isFreeMailDomain, type Provider, type Company } from '../enrichment/index.js';
import { mayLeave, emit } from '../events/index.js';
import { createLog, toPersonLog } from '../logs/index.js';
import { createPerson, emailDomain, findPersonByEmail, getPerson } from '../persons/index.js';
import { enrichmentOn } from '../site-settings/index.js';
import { insertLead } from './repository.js';
import type { FormEnrichedData, FormEnrichmentFailedData, FormSubmittedData } from './schemas.js';

// The lead rules (issue 47): who a lead is, what its email domain names, the account it makes and
// what is recorded of it. The visitor plane (site/forms/) only takes the form and its visit.

/** What a visitor typed into a lead form, validated. */
export interface LeadTyped {
  name: string;
  email: string;
  phone: string;
}

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
  lead: LeadTyped,
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

/**
 * What a lead's email domain says (issue 39), learnt before the lead's transaction so that no
 * transaction waits on the provider: nothing (an email without a domain), why it names no company
 * (`no_provider`: the tenant's `enrichment` is off), or its company (`null`: no provider, so the
 * domain alone).
 */
export type LeadEnrichment =
  | { kind: 'off' }
  | { kind: 'failed'; reason: FormEnrichmentFailedData['reason'] }
  | { kind: 'company'; domain: string; company: Company | null };

/**
 * Asks the provider about a lead's email and its domain, within ENRICHMENT_TIMEOUT_MS: the
 * visitor's thank-you waits that long at most. A free-mail domain is never sent, nor anything of a
 * lead posted with `Sec-GPC: 1` (`not_shared`, asked of the one exit rule, events/may-leave.ts):
 * its domain names no account either, since naming one would be enriching it.
 */
export async function enrichmentOfLead(
  db: Kysely<Database>,
  provider: Provider | undefined,
  tenantId: string,
  email: string,
  gpc = false,
): Promise<LeadEnrichment> {
  const domain = emailDomain(email)?.toLowerCase();
  if (domain === undefined) return { kind: 'off' };
  if (!mayLeave({ exit: 'enrichment.lead', gpc })) return { kind: 'failed', reason: 'not_shared' };
  // Turned off by the tenant: no provider of theirs, nor the domain alone, names a company. Said
  // all the same, so that every lead with an email is followed by exactly one enrichment event.
  if (!(await enrichmentOn(db, tenantId))) return { kind: 'failed', reason: 'no_provider' };
  if (isFreeMailDomain(domain)) return { kind: 'failed', reason: 'free_email_domain' };
  if (!provider) return { kind: 'company', domain, company: null };
  const answer = await provider.ask('lead', { email, domain });
  if (answer.outcome === 'company') return { kind: 'company', domain, company: answer.company };
  return { kind: 'failed', reason: answer.outcome === 'unknown' ? 'provider_unknown' : 'provider_error' };
}

/**
 * In the lead's transaction, after `form.submitted`: the tenant's account of the domain, made when
 * missing (named by the provider's company, else by the domain), and `form.enriched`; or
 * `form.enrichment_failed` with its reason. A provider that failed or knows no company makes no
 * account: the domain alone may be no company's (a family's own domain, a school's).
 */
async function recordEnrichment(
  trx: Transaction<Database>,
  tenantId: string,
  enrichment: LeadEnrichment,
  lead: { formSubmissionId: string; personId: string },
): Promise<void> {
  if (enrichment.kind === 'off') return;
  if (enrichment.kind === 'failed') {
    const data: FormEnrichmentFailedData = { ...lead, reason: enrichment.reason };
    await emit(trx, tenantId, 'form.enrichment_failed', data);
    return;
  }
  const { domain, company } = enrichment;
  const { accountId } = await accountOfDomain(trx, tenantId, { name: company?.name ?? domain, domain });
  const data: FormEnrichedData = {
    ...lead,
    accountId,
    company: company
      ? { domain, name: company.name, industry: company.industry, employees: company.employees, country: company.country }
      : { domain },
  };
  await emit(trx, tenantId, 'form.enriched', data);
}

/** A lead form taken by the visitor plane, on its visit's session, for the lead rules to record. */
export interface TakenLead {
  tenantId: string;
  formSubmissionId: string;
  formSubmissionIdentifier: string;
  pageId: string;
  audienceId: string;
  actionId: string;
  /** The person of the link the visit came through (a person audience's), if any. */
  linkPersonId: string | null;
  session: { audienceSessionId: string; analyticsSessionId: string };
  typed: LeadTyped;
  at: string;
  /** Posted with `Sec-GPC: 1`: the lead is kept, and marked so that it never leaves the service. */
  gpc: boolean;
  enrichment: LeadEnrichment;
}

/**
 * In the form's transaction: the lead, as a lead of the person who filled it (leadPerson) with what
 * they typed and the link's person when it differs, in that person's log, and as `form.submitted`
 * with `personId` and `viaPersonId`, then what its email domain named (an account and
 * `form.enriched`, or why not).
 */
export async function recordTakenLead(trx: Transaction<Database>, taken: TakenLead): Promise<void> {
  const { tenantId, typed } = taken;
  const lead = { name: typed.name, email: typed.email, phone: typed.phone };
  // Who filled the form, never changed by it; the session stays on the audience served.
  const owner = await leadPerson(trx, tenantId, typed, taken.linkPersonId);
  const { personId, viaPersonId } = owner;
  const log = await createLog(trx, 'person', tenantId, personId, {
    source: 'pages',
    type: 'form-submitted',
    payload: {
      pageId: taken.pageId,
      audienceId: taken.audienceId,
      actionId: taken.actionId,
      formSubmissionId: taken.formSubmissionId,
      ...lead,
      // What a visitor typed is their claim: nobody confirmed that this person typed it.
      verified: false,
      matchedBy: owner.matchedBy,
      viaPersonId,
    },
  });
  await emit(trx, tenantId, 'person_log.created', toPersonLog(log));
  await insertLead(trx, {
    id: taken.formSubmissionId,
    tenant_id: tenantId,
    page_id: taken.pageId,
    audience_id: taken.audienceId,
    session_id: taken.session.audienceSessionId,
    person_id: personId,
    action_id: taken.actionId,
    created_at: taken.at,
    submitted_name: lead.name,
    submitted_email: lead.email,
    submitted_phone: lead.phone,
    via_person_id: viaPersonId,
    gpc: taken.gpc ? 1 : 0,
  });
  const submitted: FormSubmittedData = {
    formSubmissionId: taken.formSubmissionId,
    formSubmissionIdentifier: taken.formSubmissionIdentifier,
    pageId: taken.pageId,
    audienceId: taken.audienceId,
    actionId: taken.actionId,
    audienceSessionId: taken.session.audienceSessionId,
    analyticsSessionId: taken.session.analyticsSessionId,
    ...lead,
    personId,
    viaPersonId,
    submittedAt: taken.at,
  };
  await emit(trx, tenantId, 'form.submitted', submitted);
  await recordEnrichment(trx, tenantId, taken.enrichment, { formSubmissionId: taken.formSubmissionId, personId });
}
