import type { Kysely } from 'kysely';
import type { Database } from '../src/db/types.js';
import { newId } from '../src/ids.js';

/**
 * Deals for the pipeline scenario (issue 40): each on an account whose domain is a seeded person's,
 * so its persons' sessions (the 30 seeded days) are touches. Accounts are made for person domains
 * no account has yet; deals are created from day 10 to day 45, two deals an account on average.
 */
export async function seedDeals(
  db: Kysely<Database>,
  options: {
    tenantId: string;
    count: number;
    personDomains: readonly (string | null)[];
    accountDomains: ReadonlySet<string>;
    base: number;
    rand: () => number;
    insertAll: (table: 'accounts' | 'deals', rows: Record<string, unknown>[]) => Promise<void>;
  },
): Promise<void> {
  const { tenantId, count, base, rand } = options;
  const wanted = Math.max(1, Math.ceil(count / 2));
  const domains = [...new Set(options.personDomains.filter((d): d is string => d !== null))].slice(0, wanted);
  const at = new Date(base).toISOString();
  const fresh = domains.filter((d) => !options.accountDomains.has(d));
  const made = fresh.map((domain) => ({
    id: newId('account'),
    tenant_id: tenantId,
    name: `Deal account ${domain}`,
    name_lc: `deal account ${domain}`,
    domain,
    domain_lc: domain,
    created_at: at,
    updated_at: at,
    latest_activity_at: at,
  }));
  await options.insertAll('accounts', made);
  const ids = new Map<string, string>(made.map((a) => [a.domain, a.id]));
  const existing = await db
    .selectFrom('accounts')
    .select(['id', 'domain_lc'])
    .where('tenant_id', '=', tenantId)
    .where('domain_lc', 'in', domains.filter((d) => !ids.has(d)).concat(['-']))
    .execute();
  for (const a of existing) ids.set(a.domain_lc, a.id);
  const accountIds = domains.map((d) => ids.get(d)).filter((id): id is string => id !== undefined);
  const stages = ['open', 'open', 'won', 'lost'] as const;
  const deals = Array.from({ length: count }, (_, i) => {
    const created = new Date(base + 10 * 86_400_000 + Math.floor(rand() * 35 * 86_400_000)).toISOString();
    const stage = stages[i % stages.length] as (typeof stages)[number];
    return {
      id: newId('deal'),
      tenant_id: tenantId,
      source: i % 2 === 0 ? 'hubspot' : 'salesforce',
      external_id: `bench-${i}`,
      name: `Deal ${i}`,
      amount_cents: Math.floor(rand() * 10_000_000),
      currency: i % 10 === 0 ? 'USD' : 'EUR',
      stage,
      account_id: accountIds[i % accountIds.length] ?? null,
      account_domain: null,
      created_at: created,
      closed_at: stage === 'open' ? null : created,
      recorded_at: created,
      updated_at: created,
    };
  });
  await options.insertAll('deals', deals);
}
