import { api, must, type PageTotals } from '../api.js';
import { Badge, LoadMore, Section, Status, useCursorList, useLoad } from '../components.js';
import { OpenButton } from '../form.js';
import { href } from '../router.js';
import { NewPage } from './page-forms.js';
import { useState } from 'preact/hooks';

/** The last 30 days' visits of every page, from the analytics overview (followed to its end, at most 1,000 pages). */
async function visitsByPage(): Promise<Map<string, PageTotals>> {
  const byPage = new Map<string, PageTotals>();
  let cursor: string | undefined;
  for (let round = 0; round < 10; round++) {
    const page = must(await api.GET('/v0/analytics/pages', { params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } } }));
    for (const item of page.items) byPage.set(item.pageId, item);
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  return byPage;
}

export function PagesView() {
  const pages = useCursorList(
    async (cursor) => must(await api.GET('/v0/pages', { params: { query: { limit: 50, ...(cursor ? { cursor } : {}) } } })),
    [],
  );
  const visits = useLoad(visitsByPage, []);
  const [adding, setAdding] = useState(false);
  return (
    <Section title="Pages">
      {adding ? <NewPage onClose={() => setAdding(false)} /> : <OpenButton label="New page" onClick={() => setAdding(true)} />}
      <Status loaded={pages}>
        {pages.items.length === 0 ? (
          <p>No pages yet.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th scope="col">Page</th>
                <th scope="col">Status</th>
                <th scope="col">Audiences</th>
                <th scope="col">Visits (30 days)</th>
              </tr>
            </thead>
            <tbody>
              {pages.items.map((p) => (
                <tr key={p.pageId}>
                  <td>
                    <a href={href('pages', p.pageId)}>{p.name}</a>
                    <div class="muted small">{p.title}</div>
                  </td>
                  <td>
                    <Badge value={p.status} />
                  </td>
                  <td class="num">{p.audiencesCount}</td>
                  <td class="num" data-visits={p.pageId}>
                    {visits.error ? '?' : visits.data ? (visits.data.get(p.pageId)?.visits ?? 0) : '…'}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <LoadMore list={pages} />
        {visits.error && (
          <p role="alert" class="error">
            Visits could not be loaded: {visits.error}
          </p>
        )}
      </Status>
    </Section>
  );
}
