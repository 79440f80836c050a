import type { DealInput } from '../deals/index.js';
import { type CrmDriver, amountOf, bounded, currencyOf, hostOf, instantOf, type Keyset, keysetCursor, parseKeyset } from './driver.js';
import { CrmError, crmCall, type Sleep } from './http.js';
import { pushContacts } from './hubspot-contacts.js';

/**
 * HubSpot through its documented CRM API, with a private app's token (Bearer):
 * - leads: hubspot-contacts.ts (new contacts created, existing ones never rewritten);
 *   `pam_last_page` and `pam_last_audience` only when the portal has those contact properties
 *   (`GET /crm/v3/properties/contacts`, asked once per sync);
 * - deals: `POST /crm/v3/objects/deals/search`, a keyset on (`hs_lastmodifieddate`, `hs_object_id`):
 *   a page of deals modified after the cursor's instant, oldest first, and the deals of one
 *   instant by id, paged by `after` (HubSpot sorts a search by one property only, so a tie is
 *   read by id in a query of its own); their companies by `POST /crm/v4/associations/deals/companies/batch/read`,
 *   and the companies' domains by `POST /crm/v3/objects/companies/batch/read`.
 */
const DEAL_PROPERTIES = ['dealname', 'amount', 'dealstage', 'createdate', 'closedate', 'hs_lastmodifieddate', 'deal_currency_code'];
const PAGE = 100;
/** HubSpot's search stops at 10,000 results per query: a fresh query from the saved cursor before that. */
const MAX_PAGES_PER_QUERY = 90;
const MODIFIED = 'hs_lastmodifieddate';
/** HubSpot's ids are integers, written as strings: the greatest is the longest, then the last in order. */
const maxId = (results: { id: string }[]): string | undefined =>
  results
    .map((r) => String(r.id))
    .reduce<string | undefined>(
      (max, id) => (max === undefined || id.length > max.length || (id.length === max.length && id > max) ? id : max),
      undefined,
    );
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

  const search = (body: Record<string, unknown>) =>
    call<SearchPage>('POST', '/crm/v3/objects/deals/search', { ...body, properties: DEAL_PROPERTIES, limit: PAGE });

  async function dealsOf(results: NonNullable<SearchPage['results']>): Promise<DealInput[]> {
    const domains = await domainsOf(results.map((r) => String(r.id)));
    return results.map((r) => dealOf(String(r.id), r.properties ?? {}, domains.get(String(r.id))));
  }

  /** Reads the rest of the tie at `tie.at` (ids after `tie.id`), paged with `after`; the cursor where it ended, or 'stop'. */
  async function readTie(tie: Keyset, page: Parameters<CrmDriver['readDeals']>[1]): Promise<Keyset | 'stop'> {
    let lastId = tie.id;
    for (;;) {
      let after: string | undefined;
      // One query's filter while it is paged: `after` counts into that query's results.
      const filters = [
        { propertyName: MODIFIED, operator: 'EQ', value: String(Date.parse(tie.at)) },
        ...(lastId === undefined ? [] : [{ propertyName: 'hs_object_id', operator: 'GT', value: lastId }]),
      ];
      for (let pages = 0; pages < MAX_PAGES_PER_QUERY; pages++) {
        const answer = await search({
          filterGroups: [{ filters }],
          sorts: [{ propertyName: 'hs_object_id', direction: 'ASCENDING' }],
          ...(after === undefined ? {} : { after }),
        });
        const results = answer.results ?? [];
        if (results.length === 0) return { at: tie.at, ...(lastId === undefined ? {} : { id: lastId }) };
        lastId = String(results[results.length - 1]?.id);
        if (!(await page(await dealsOf(results), keysetCursor(tie.at, lastId)))) return 'stop';
        after = answer.paging?.next?.after;
        if (after === undefined) return { at: tie.at, id: lastId };
      }
      // Past HubSpot's search window: a fresh query from the last id read.
    }
  }

  return {
    async pushLeads(leads) {
      if (leads.length === 0) return [];
      return pushContacts(call, leads, await contactProperties());
    },

    async readDeals(start, page) {
      let cursor = start === null ? undefined : parseKeyset(start);
      for (;;) {
        // The deals of the cursor's instant not read yet, by id: a tie of any size is read once.
        if (cursor !== undefined) {
          const tie = cursor;
          const done = await readTie(tie, page);
          if (done === 'stop') return;
          cursor = done;
        }
        // The next page after it, by modification time: what precedes the page's last instant is
        // complete; that instant may go on past the page, so a full page hands it to the tie read.
        const since = cursor === undefined ? undefined : Date.parse(cursor.at);
        const answer = await search({
          ...(since === undefined
            ? {}
            : { filterGroups: [{ filters: [{ propertyName: MODIFIED, operator: 'GT', value: String(since) }] }] }),
          sorts: [{ propertyName: MODIFIED, direction: 'ASCENDING' }],
        });
        const results = answer.results ?? [];
        if (results.length === 0) return;
        const lastAt = instantOf(results[results.length - 1]?.properties?.hs_lastmodifieddate);
        if (lastAt === undefined) throw new CrmError('HubSpot sent a deal without hs_lastmodifieddate', 200);
        const complete = results.length < PAGE;
        const taken = complete ? results : results.filter((r) => instantOf(r.properties?.hs_lastmodifieddate) !== lastAt);
        const lastId = complete ? maxId(results.filter((r) => instantOf(r.properties?.hs_lastmodifieddate) === lastAt)) : undefined;
        cursor = { at: lastAt, ...(lastId === undefined ? {} : { id: lastId }) };
        if (!(await page(await dealsOf(taken), keysetCursor(cursor.at, cursor.id)))) return;
        if (complete) return;
      }
    },
  };
}
