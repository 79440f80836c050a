import type { Transaction } from 'kysely';
import { accountOfDomain } from '../../accounts/repository.js';
import type { Database } from '../../db/types.js';
import { isFreeMailDomain } from '../../enrichment/free-mail.js';
import type { Provider } from '../../enrichment/provider.js';
import type { Company } from '../../enrichment/visit.js';
import { mayLeave } from '../../events/may-leave.js';
import { emit } from '../../events/outbox.js';
import type { FormEnrichedData, FormEnrichmentFailedData } from '../../leads/schemas.js';
import { emailDomain } from '../../persons/repository.js';
import { enrichmentOn } from '../../site-settings/repository.js';
import type { Kysely } from 'kysely';

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
export async function recordEnrichment(
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
