import { api, must } from '../api.js';
import { Section, Status, useLoad, When } from '../components.js';
import { Named } from '../names.js';
import { href } from '../router.js';
import { plural } from '../words.js';

// An account's view (issue 46): its people, their leads, their visits and its deals, by name. The
// people are those whose domain is the account's; the API lists leads and visits for the tenant,
// so an account's are found among the newest (READ_AT_MOST of each), which the view says.

const READ_AT_MOST = 500;
const PAGE_SIZE = 100;

async function readNewest<T>(
  read: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor: string | null }>,
  keep: (item: T) => boolean,
) {
  const kept: T[] = [];
  let cursor: string | undefined;
  let seen = 0;
  do {
    const page = await read(cursor);
    seen += page.items.length;
    kept.push(...page.items.filter(keep));
    cursor = page.nextCursor ?? undefined;
  } while (cursor && seen < READ_AT_MOST);
  return kept;
}

const query = (cursor: string | undefined) => ({ limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) });

async function accountActivity(accountId: string, domain: string) {
  const sameDomain = (d: string | null) => d !== null && d.toLowerCase() === domain.toLowerCase();
  const people = await readNewest(
    async (cursor) => must(await api.GET('/v0/persons/search', { params: { query: { ...query(cursor), query: domain } } })),
    (p) => sameDomain(p.domain),
  );
  const ids = new Set(people.map((p) => p.personId));
  const [leads, visits, deals] = await Promise.all([
    readNewest(
      async (cursor) => {
        const page = must(await api.GET('/v0/leads', { params: { query: query(cursor) } }));
        if (typeof page === 'string') throw new Error('The leads came back as text, not JSON');
        return page;
      },
      (l) => ids.has(l.personId),
    ),
    readNewest(
      async (cursor) => must(await api.GET('/v0/events', { params: { query: { ...query(cursor), type: 'visit.started' } } })),
      (e) => visitOf(e.payload)?.accountId === accountId,
    ),
    readNewest(
      async (cursor) => must(await api.GET('/v0/deals', { params: { query: { ...query(cursor), accountId } } })),
      () => true,
    ),
  ]);
  return { people, leads, visits, deals };
}

interface Visit {
  accountId: string | null;
  personId: string;
  pageId: string;
  path: string;
  sessionStartedAt: string;
}
/** A `visit.started` event's data (docs/webhooks.md), or undefined for another shape. */
function visitOf(payload: Record<string, unknown>): Visit | undefined {
  const data = payload.data;
  return typeof data === 'object' && data !== null && 'personId' in data ? (data as Visit) : undefined;
}

const money = (amount: number, currency: string) => new Intl.NumberFormat('en', { style: 'currency', currency }).format(amount);

export function AccountActivity({ accountId, domain }: { accountId: string; domain: string }) {
  const loaded = useLoad(() => accountActivity(accountId, domain), [accountId, domain]);
  const data = loaded.data;
  return (
    <Status loaded={loaded}>
      {data && (
        <>
          <p class="muted small" data-summary="">
            {[
              plural('person', data.people.length, 'people'),
              plural('lead', data.leads.length),
              plural('visit', data.visits.length),
              plural('deal', data.deals.length),
            ].join(' · ')}
          </p>
          <Section title="People">
            {data.people.length === 0 ? (
              <p>No one at {domain} yet.</p>
            ) : (
              <ul data-list="people">
                {data.people.map((p) => (
                  <li key={p.personId}>
                    <a href={href('persons', p.personId)}>{p.name}</a> <span class="muted small">{p.email ?? ''}</span>
                  </li>
                ))}
              </ul>
            )}
          </Section>
          <Section title="Leads">
            {data.leads.length === 0 ? (
              <p>No leads from its people among the newest {READ_AT_MOST}.</p>
            ) : (
              <ul data-list="leads">
                {data.leads.map((l) => (
                  <li key={l.leadId}>
                    <When at={l.submittedAt} /> <Named id={l.personId} /> on {l.pageName ?? 'a deleted page'}
                  </li>
                ))}
              </ul>
            )}
          </Section>
          <Section title="Visits">
            {data.visits.length === 0 ? (
              <p>No visits of its people among the newest {READ_AT_MOST}.</p>
            ) : (
              <ul data-list="visits">
                {data.visits.map((e) => {
                  const v = visitOf(e.payload);
                  return (
                    v && (
                      <li key={e.eventId}>
                        <When at={v.sessionStartedAt} /> <Named id={v.personId} /> opened <Named id={v.pageId} />
                      </li>
                    )
                  );
                })}
              </ul>
            )}
          </Section>
          <Section title="Deals">
            {data.deals.length === 0 ? (
              <p>No deals yet.</p>
            ) : (
              <ul data-list="deals">
                {data.deals.map((d) => (
                  <li key={d.dealId}>
                    {d.name}: {money(d.amount, d.currency)} <span class="badge">{d.stage}</span>
                  </li>
                ))}
              </ul>
            )}
          </Section>
        </>
      )}
    </Status>
  );
}
