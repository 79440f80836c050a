import type { DealInput } from '../deals/schemas.js';
import { type CrmDriver, amountOf, bounded, currencyOf, hostOf, instantOf } from './driver.js';
import { CrmError, crmCall, type Sleep } from './http.js';
import type { LeadToPush } from './leads.js';

/**
 * HubSpot through its documented CRM API, with a private app's token (Bearer):
 * - leads: `POST /crm/v3/objects/contacts/batch/upsert`, by email; `pam_last_page` and
 *   `pam_last_audience` only when the portal has those contact properties
 *   (`GET /crm/v3/properties/contacts`, asked once per sync);
 * - deals: `POST /crm/v3/objects/deals/search` on `hs_lastmodifieddate` ≥ the cursor, oldest first,
 *   paged by `after`; their companies by `POST /crm/v4/associations/deals/companies/batch/read`,
 *   and the companies' domains by `POST /crm/v3/objects/companies/batch/read`.
 */
const DEAL_PROPERTIES = ['dealname', 'amount', 'dealstage', 'createdate', 'closedate', 'hs_lastmodifieddate', 'deal_currency_code'];
const PAGE = 100;
/** HubSpot's search stops at 10,000 results per query: a fresh query from the saved cursor before that. */
const MAX_PAGES_PER_QUERY = 90;
/** HubSpot's "Primary" deal-to-company association. */
const PRIMARY_COMPANY = 5;

interface SearchPage {
  results?: { id: string; properties?: Record<string, string | null> }[];
  paging?: { next?: { after?: string } };
}
interface AssociationsAnswer {
  results?: { from?: { id?: string }; to?: { toObjectId?: string | number; associationTypes?: { typeId?: number }[] }[] }[];
}
interface CompaniesAnswer {
  results?: { id: string; properties?: Record<string, string | null> }[];
}

export function hubspotDriver(apiUrl: string, accessToken: string, sleep?: Sleep, signal?: AbortSignal): CrmDriver {
  const call = async <T>(method: 'GET' | 'POST', path: string, json?: unknown): Promise<T> =>
    (
      await crmCall(
        'HubSpot',
        { method, url: `${apiUrl}${path}`, bearer: accessToken, ...(json === undefined ? {} : { json }) },
        sleep,
        signal,
      )
    ).body as T;
  let ownProperties: Set<string> | undefined;

  async function contactProperties(): Promise<Set<string>> {
    if (ownProperties) return ownProperties;
    const answer = await call<{ results?: { name?: string }[] }>('GET', '/crm/v3/properties/contacts');
    ownProperties = new Set((answer.results ?? []).map((p) => p.name ?? ''));
    return ownProperties;
  }

  function contactOf(lead: LeadToPush, has: Set<string>) {
    const properties: Record<string, string> = { email: lead.email };
    // An empty value would clear what the CRM holds: only what the lead says is sent.
    const set = (name: string, value: string) => {
      if (value !== '') properties[name] = value;
    };
    set('firstname', lead.firstName);
    set('lastname', lead.lastName);
    set('phone', lead.phone);
    set('company', lead.company);
    if (has.has('pam_last_page')) set('pam_last_page', lead.pageName);
    if (has.has('pam_last_audience')) set('pam_last_audience', lead.audienceName);
    return { id: lead.email, idProperty: 'email', properties };
  }

  async function domainsOf(dealIds: string[]): Promise<Map<string, string>> {
    const domains = new Map<string, string>();
    if (dealIds.length === 0) return domains;
    const links = await call<AssociationsAnswer>('POST', '/crm/v4/associations/deals/companies/batch/read', {
      inputs: dealIds.map((id) => ({ id })),
    });
    const companyOf = new Map<string, string>();
    for (const result of links.results ?? []) {
      const to = result.to ?? [];
      const chosen = to.find((t) => t.associationTypes?.some((a) => a.typeId === PRIMARY_COMPANY)) ?? to[0];
      if (result.from?.id !== undefined && chosen?.toObjectId !== undefined)
        companyOf.set(String(result.from.id), String(chosen.toObjectId));
    }
    const companyIds = [...new Set(companyOf.values())];
    if (companyIds.length === 0) return domains;
    const companies = await call<CompaniesAnswer>('POST', '/crm/v3/objects/companies/batch/read', {
      properties: ['domain'],
      inputs: companyIds.map((id) => ({ id })),
    });
    const domainOf = new Map((companies.results ?? []).map((c) => [String(c.id), hostOf(c.properties?.domain)]));
    for (const [dealId, companyId] of companyOf) {
      const domain = domainOf.get(companyId);
      if (domain) domains.set(dealId, domain);
    }
    return domains;
  }

  function dealOf(id: string, p: Record<string, string | null>, domain: string | undefined): DealInput {
    const stage = p.dealstage === 'closedwon' ? 'won' : p.dealstage === 'closedlost' ? 'lost' : 'open';
    const createdAt = instantOf(p.createdate) ?? instantOf(p.hs_lastmodifieddate) ?? new Date().toISOString();
    const closedAt = stage === 'open' ? null : (instantOf(p.closedate) ?? null);
    return {
      source: 'hubspot',
      externalId: id,
      name: bounded(p.dealname, `HubSpot deal ${id}`),
      amount: amountOf(p.amount),
      currency: currencyOf(p.deal_currency_code),
      stage,
      accountDomain: domain ?? null,
      createdAt,
      closedAt,
    };
  }

  return {
    async pushLeads(leads) {
      if (leads.length === 0) return [];
      const has = await contactProperties();
      await call('POST', '/crm/v3/objects/contacts/batch/upsert', { inputs: leads.map((lead) => contactOf(lead, has)) });
      return leads.map((l) => l.leadId);
    },

    async readDeals(start, page) {
      let cursor = start;
      for (;;) {
        let after: string | undefined;
        // One query's filter while it is paged: `after` counts into that query's results, and the
        // cursor moved by a page would skip as many deals as the pages before it held.
        const since = cursor === null ? undefined : Date.parse(cursor);
        for (let pages = 0; pages < MAX_PAGES_PER_QUERY; pages++) {
          const body = {
            ...(since === undefined || Number.isNaN(since)
              ? {}
              : { filterGroups: [{ filters: [{ propertyName: 'hs_lastmodifieddate', operator: 'GTE', value: String(since) }] }] }),
            sorts: [{ propertyName: 'hs_lastmodifieddate', direction: 'ASCENDING' }],
            properties: DEAL_PROPERTIES,
            limit: PAGE,
            ...(after === undefined ? {} : { after }),
          };
          const answer = await call<SearchPage>('POST', '/crm/v3/objects/deals/search', body);
          const results = answer.results ?? [];
          if (results.length === 0) return;
          const domains = await domainsOf(results.map((r) => String(r.id)));
          const deals = results.map((r) => dealOf(String(r.id), r.properties ?? {}, domains.get(String(r.id))));
          const last = instantOf(results[results.length - 1]?.properties?.hs_lastmodifieddate);
          if (last === undefined) throw new CrmError('HubSpot sent a deal without hs_lastmodifieddate', 200);
          cursor = last;
          if (!(await page(deals, cursor))) return;
          after = answer.paging?.next?.after;
          if (after === undefined) return;
        }
        // Past HubSpot's search window: the next query starts again from the cursor saved.
      }
    },
  };
}
