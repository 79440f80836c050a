import { useState } from 'preact/hooks';
import { type AudienceVersion, api, must, once, type Session } from '../api.js';
import { Badge, LoadMore, Section, Status, useCursorList, useLoad, When, WriteButton } from '../components.js';
import { CsvButton, type Range, RangeFields, useRange } from '../filters.js';
import { href } from '../router.js';
import { AudienceSettings, LatestVersion } from './audience-forms.js';

const STEPS: [keyof AudienceVersion, string][] = [
  ['createdAt', 'created'],
  ['becameDraftAt', 'draft'],
  ['queuedAt', 'queued'],
  ['publishedAt', 'published'],
  ['cancelledAt', 'cancelled'],
  ['obsoleteAt', 'obsolete'],
  ['archivedAt', 'archived'],
];

function Versions({ versions }: { versions: AudienceVersion[] }) {
  return (
    <ol class="timeline">
      {versions.map((v) => (
        <li key={v.versionId} data-version={v.versionNumber}>
          <strong>Version {v.versionNumber}</strong> <Badge value={v.status} />
          {v.queueDurationMs !== null && <span class="muted small"> queued {Math.round(v.queueDurationMs)} ms</span>}
          <ul class="steps">
            {STEPS.filter(([key]) => v[key]).map(([key, label]) => (
              <li key={key}>
                {label} <When at={v[key] as string} />
              </li>
            ))}
          </ul>
        </li>
      ))}
    </ol>
  );
}

function Sessions({ pageId, audienceId }: { pageId: string; audienceId: string }) {
  const range = useRange();
  const [applied, setApplied] = useState<Range>({});
  const filters = () => ({ audienceId, ...applied });
  const sessions = useCursorList(
    async (cursor) => {
      const page = must(
        await api.GET('/v0/pages/{page_id}/audience_sessions', {
          params: { path: { page_id: pageId }, query: { ...filters(), limit: 50, ...(cursor ? { cursor } : {}) } },
        }),
      );
      // The operation also answers text/csv; asked for JSON, a text answer is a fault.
      if (typeof page === 'string') throw new Error('The sessions came back as text, not JSON');
      return page;
    },
    [pageId, audienceId, applied],
  );
  const csv = async () =>
    must(
      await api.GET('/v0/pages/{page_id}/audience_sessions', {
        params: { path: { page_id: pageId }, query: filters() },
        headers: { accept: 'text/csv' },
        parseAs: 'blob',
      }),
    );
  const apply = (e: Event) => {
    e.preventDefault();
    setApplied(range.range());
  };
  return (
    <Section title="Sessions">
      <form class="controls" onSubmit={apply}>
        <RangeFields state={range} />
        <button type="submit" class="secondary">
          Filter
        </button>
        <CsvButton label="Download CSV" name={`sessions-${audienceId}.csv`} fetch={csv} />
      </form>
      <Status loaded={sessions}>
        <SessionTable sessions={sessions.items} />
        <LoadMore list={sessions} />
      </Status>
    </Section>
  );
}

function SessionTable({ sessions }: { sessions: Session[] }) {
  if (sessions.length === 0) return <p>No sessions match.</p>;
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">Started</th>
          <th scope="col">Time on page</th>
          <th scope="col">Scroll</th>
          <th scope="col">Clicks</th>
          <th scope="col">Outcome</th>
          <th scope="col">UTM source</th>
        </tr>
      </thead>
      <tbody>
        {sessions.map((s) => (
          <tr key={s.audienceSessionId}>
            <td>
              <When at={s.sessionStartedAt} />
            </td>
            <td class="num">{s.timeSpentSeconds} s</td>
            <td class="num">{s.maxScrollDepthPercentage} %</td>
            <td class="num">{s.totalClicksCount}</td>
            <td>{s.hasConversion ? 'converted' : s.hasFormSubmit ? 'form sent' : s.isBounce ? 'bounced' : 'visited'}</td>
            <td>{s.utmSource || <span class="muted">—</span>}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** POST /v0/pages/{page_id}/regenerate (the page agent): queues a new version of this audience. */
async function regenerate(pageId: string, audienceId: string): Promise<unknown> {
  return must(
    await api.POST('/v0/pages/{page_id}/regenerate', {
      params: { path: { page_id: pageId }, header: once() },
      body: { audienceIds: [audienceId] },
    }),
  );
}

export function AudienceView({ pageId, audienceId }: { pageId: string; audienceId: string }) {
  const path = { page_id: pageId, audience_id: audienceId };
  const audience = useLoad(
    async () => must(await api.GET('/v0/pages/{page_id}/audiences/{audience_id}', { params: { path } })),
    [pageId, audienceId],
  );
  const versions = useCursorList(
    async (cursor) =>
      must(
        await api.GET('/v0/pages/{page_id}/audiences/{audience_id}/versions', {
          params: { path, query: { limit: 50, ...(cursor ? { cursor } : {}) } },
        }),
      ),
    [pageId, audienceId],
  );
  const [notice, setNotice] = useState('');
  const refresh = (message: string) => () => {
    setNotice(message);
    audience.reload();
    versions.reload();
  };
  const a = audience.data;
  return (
    <Status loaded={audience}>
      {a && (
        <article>
          <p class="crumbs">
            <a href={href('pages')}>Pages</a> / <a href={href('pages', pageId)}>Page</a> /
          </p>
          <h1>
            {a.effectiveName} <Badge value={a.archivedAt ? 'archived' : a.status} />
          </h1>
          <p class="muted">
            {a.personId ? <a href={href('persons', a.personId)}>The person of this audience</a> : 'Not linked to a person'}
          </p>
          <div class="actions">
            <WriteButton label="Regenerate" action={() => regenerate(pageId, audienceId)} done={refresh('A new version is queued.')} />
            {a.archivedAt ? (
              <WriteButton
                label="Restore"
                action={async () =>
                  must(
                    await api.POST('/v0/pages/{page_id}/audiences/{audience_id}/restore', { params: { path, header: once() }, body: {} }),
                  )
                }
                done={refresh('Restored.')}
              />
            ) : (
              <WriteButton
                label="Archive"
                kind="danger"
                action={async () =>
                  must(
                    await api.POST('/v0/pages/{page_id}/audiences/{audience_id}/archive', { params: { path, header: once() }, body: {} }),
                  )
                }
                done={refresh('Archived.')}
              />
            )}
            <output aria-live="polite">{notice}</output>
          </div>
          <LatestVersion audience={a} version={a.latestVersion} changed={refresh('Saved.')} />
          <AudienceSettings key={`${a.personRouteKey}|${a.customName}|${a.flags.join()}`} audience={a} saved={refresh('Saved.')} />
          <Section title="Versions">
            <Status loaded={versions}>
              <Versions versions={versions.items} />
              <LoadMore list={versions} />
            </Status>
          </Section>
          <Sessions pageId={pageId} audienceId={audienceId} />
        </article>
      )}
    </Status>
  );
}
