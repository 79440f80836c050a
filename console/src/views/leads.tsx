import { useState } from 'preact/hooks';
import { api, must } from '../api.js';
import { LoadMore, Section, Status, useCursorList, When } from '../components.js';
import { pageSearch, useSearch } from '../choices.js';
import { CsvButton, type Range, RangeFields, useRange } from '../filters.js';
import { Picker } from '../picker.js';
import { href } from '../router.js';

interface Filters extends Range {
  pageId?: string;
}

/** Where a lead came from: the visit's channel (and referrer), then its UTM values, as its session recorded them. */
function source(lead: { channel: string; referrerHost: string; utmSource: string; utmMedium: string; utmCampaign: string }): string {
  const channel = lead.referrerHost ? `${lead.channel || 'referral'} (${lead.referrerHost})` : lead.channel || 'unknown';
  const utm = [lead.utmSource, lead.utmMedium, lead.utmCampaign].filter((p) => p !== '');
  return utm.length > 0 ? `${channel} · ${utm.join(' / ')}` : channel;
}

/**
 * Lead forms submitted on served pages, newest first (GET /v0/leads), each linking to its person
 * (who filled it) and, when it was on someone else's link, to that person; what was typed is shown
 * beside the person's own fields, since a visitor's form never changes a person.
 */
export function LeadsView() {
  const [pageId, setPageId] = useState('');
  const range = useRange();
  const [applied, setApplied] = useState<Filters>({});
  const pagesNamed = useSearch(pageSearch);
  const leads = useCursorList(
    async (cursor) => {
      const page = must(await api.GET('/v0/leads', { params: { query: { ...applied, limit: 50, ...(cursor ? { cursor } : {}) } } }));
      // The operation also answers text/csv; asked for JSON, a text answer is a fault.
      if (typeof page === 'string') throw new Error('The leads came back as text, not JSON');
      return page;
    },
    [applied],
  );
  const apply = (e: Event) => {
    e.preventDefault();
    setApplied({ ...(pageId ? { pageId } : {}), ...range.range() });
  };
  const csv = async () =>
    must(await api.GET('/v0/leads', { params: { query: applied }, headers: { accept: 'text/csv' }, parseAs: 'blob' }));
  return (
    <Section title="Leads">
      <form class="controls" onSubmit={apply}>
        <Picker
          name="pageId"
          label="Page"
          empty="All pages"
          value={pageId ? [pageId] : []}
          onChange={(ids) => setPageId(ids[0] ?? '')}
          search={pagesNamed}
        />
        <RangeFields state={range} />
        <button type="submit" class="secondary">
          Filter
        </button>
        <CsvButton label="Export CSV" name="leads.csv" fetch={csv} />
      </form>
      <Status loaded={leads}>
        {leads.items.length === 0 ? (
          <p>No leads match.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th scope="col">Person</th>
                <th scope="col">Submitted (unverified)</th>
                <th scope="col">Page</th>
                <th scope="col">Audience</th>
                <th scope="col">Source</th>
                <th scope="col">Time</th>
              </tr>
            </thead>
            <tbody>
              {leads.items.map((l) => (
                <tr key={l.leadId}>
                  <td>
                    <a href={href('persons', l.personId)}>{l.personName}</a>
                    <div class="muted small">{l.personEmail ?? ''}</div>
                    {l.viaPersonId === null ? null : (
                      <div class="small">
                        via <a href={href('persons', l.viaPersonId)}>the link's person</a>
                      </div>
                    )}
                  </td>
                  <td>
                    {l.submittedName}
                    <div class="muted small">{[l.submittedEmail, l.submittedPhone].filter((v) => v !== '').join(' · ')}</div>
                  </td>
                  <td>
                    {l.pageName === null ? <span class="muted">deleted page</span> : <a href={href('pages', l.pageId)}>{l.pageName}</a>}
                  </td>
                  <td>
                    {l.audienceName === null ? (
                      <span class="muted">—</span>
                    ) : (
                      <a href={href('pages', l.pageId, 'audiences', l.audienceId)}>{l.audienceName || 'Generic'}</a>
                    )}
                  </td>
                  <td>{source(l)}</td>
                  <td>
                    <When at={l.submittedAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <LoadMore list={leads} />
      </Status>
    </Section>
  );
}
