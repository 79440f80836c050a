import { api, must } from './api.js';
import { LoadMore, Section, Status, useCursorList, When } from './components.js';

/** Whose logs: a person's and an account's have the same shape under their own paths and ids. */
export type LogOwner = { personId: string } | { accountId: string };

interface LogEntry {
  id: string;
  source: string;
  type: string;
  payload: Record<string, unknown>;
  createdAt: string;
}

async function logsPage(owner: LogOwner, cursor: string | undefined): Promise<{ items: LogEntry[]; nextCursor: string | null }> {
  const query = { limit: 50, ...(cursor ? { cursor } : {}) };
  if ('personId' in owner) {
    const page = must(await api.GET('/v0/persons/{person_id}/logs', { params: { path: { person_id: owner.personId }, query } }));
    return { ...page, items: page.items.map((l) => ({ ...l, id: l.personLogId })) };
  }
  const page = must(await api.GET('/v0/accounts/{account_id}/logs', { params: { path: { account_id: owner.accountId }, query } }));
  return { ...page, items: page.items.map((l) => ({ ...l, id: l.accountLogId })) };
}

/** A person's or an account's logs, newest first, 50 at a time. */
export function LogTimeline({ owner }: { owner: LogOwner }) {
  const ownerId = 'personId' in owner ? owner.personId : owner.accountId;
  const logs = useCursorList((cursor) => logsPage(owner, cursor), [ownerId]);
  return (
    <Section title="Log timeline">
      <Status loaded={logs}>
        {logs.items.length === 0 ? (
          <p>No log entries.</p>
        ) : (
          <ol class="timeline">
            {logs.items.map((log) => (
              <li key={log.id}>
                <When at={log.createdAt} /> <strong>{log.type}</strong> <span class="muted">from {log.source}</span>
                <pre class="payload">{JSON.stringify(log.payload, null, 2)}</pre>
              </li>
            ))}
          </ol>
        )}
        <LoadMore list={logs} />
      </Status>
    </Section>
  );
}
