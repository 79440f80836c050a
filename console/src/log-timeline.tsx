import { api, must } from './api.js';
import { LoadMore, Section, Status, useCursorList, When } from './components.js';
import { isNamedId, Named } from './names.js';

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

/** An identifier as words: `deal_won` and `dealWon` are "Deal won". */
export function words(key: string): string {
  const spaced = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_\-.]+/g, ' ')
    .trim()
    .toLowerCase();
  return spaced ? spaced[0]?.toUpperCase() + spaced.slice(1) : key;
}

/** One value as a reader says it: yes/no, lists joined, nothing as a dash. */
function valueText(value: unknown): string {
  if (value === null || value === undefined || value === '') return '—';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (Array.isArray(value)) return value.map(valueText).join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** Nested objects become "Deal › Stage", so every line is one fact; at most 30 are shown. An id stays raw: it is shown by its name. */
function facts(payload: Record<string, unknown>, prefix = '', out: [string, unknown][] = []): [string, unknown][] {
  for (const [key, value] of Object.entries(payload)) {
    if (out.length >= 30) break;
    const label = prefix ? `${prefix} › ${words(key)}` : words(key);
    if (value !== null && typeof value === 'object' && !Array.isArray(value) && prefix.split(' › ').length < 3)
      facts(value as Record<string, unknown>, label, out);
    else out.push([label, isNamedId(value) ? value : valueText(value)]);
  }
  return out;
}

/** What happened, in words: each field of the entry's payload on its own line. */
function Details({ payload }: { payload: Record<string, unknown> }) {
  const lines = facts(payload);
  if (lines.length === 0) return null;
  return (
    <dl class="log-facts">
      {lines.map(([label, value], i) => (
        // A payload's keys are unique per level, but two flattened labels may still meet.
        <div key={`${i}-${label}`}>
          <dt>{label}</dt>
          <dd>{isNamedId(value) ? <Named id={value} /> : String(value)}</dd>
        </div>
      ))}
    </dl>
  );
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
                <When at={log.createdAt} /> <strong>{words(log.type)}</strong> <span class="muted">from {words(log.source)}</span>
                <Details payload={log.payload} />
              </li>
            ))}
          </ol>
        )}
        <LoadMore list={logs} />
      </Status>
    </Section>
  );
}
