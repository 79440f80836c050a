/**
 * The seam between serving (src/site/serve, segments) and the enrichment provider (issue 39).
 * Serving asks for the company behind a visitor's address only when some published segment of the
 * tenant reads a `company.*` field; the provider side (its client, its per-/24 cache, its metrics)
 * implements CompanyLookup. The address is used in memory and never stored or logged.
 */

/** A company as the provider names it: never a person. */
export interface Company {
  name: string | null;
  domain: string | null;
  industry: string | null;
  employees: number | null;
  country: string | null;
}

/**
 * The company behind `address` for `tenantId`'s visitor, or null when unknown, turned off for the
 * tenant, or the provider is slow or failing. Must resolve within its own timeout and never reject.
 */
export type CompanyLookup = (tenantId: string, address: string) => Promise<Company | null>;

/** No provider configured: no company is ever known. */
export const noCompanies: CompanyLookup = async () => null;

/**
 * What serving calls: the lookup given, guarded so that a lookup that throws is a visit with no
 * company (a page is never refused for it).
 */
export async function companyForVisit(lookup: CompanyLookup, tenantId: string, address: string): Promise<Company | null> {
  try {
    return await lookup(tenantId, address);
  } catch {
    return null;
  }
}
