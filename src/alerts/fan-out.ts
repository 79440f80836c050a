import { accountOfPerson } from '../accounts/index.js';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { AlertMessagesTable, Database } from '../db/types.js';
import { type EventHandler, eventPayloads, mayLeave } from '../events/index.js';
import { leadsSentWithGpc } from '../leads/index.js';
import { sessionsSentWithGpc } from '../visits/index.js';
import { newMessage } from './repository.js';
import { ALERT_EVENTS } from './schemas.js';

/** What a message says, taken from the event when it is fanned out; names are read at sending. */
export interface Facts {
  eventType: string;
  personId: string | null;
  accountId: string | null;
  pageId: string | null;
  audienceId: string | null;
  path: string | null;
  channel: string | null;
  audienceSessionId: string | null;
  formSubmissionId: string | null;
}

const isAlertEvent = (type: string) => (ALERT_EVENTS as readonly string[]).includes(type);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/**
 * The outbox's `alerts` consumer (events/consumers.ts), run by the alerts' loop (dispatcher.ts) in
 * the transaction that moves its cursor, so an event wakes its alerts exactly once, whichever
 * instance reads it, and never again after a crash. Matching events of an (alert, account) within the same hour only count towards the next
 * message; the window's UPDATE reads and turns the hour in one statement, so two instances fanning
 * out at once cannot both send for one hour.
 */
export const alertOnEvents: EventHandler = async (trx, events) => {
  const relevant = events.filter((e) => isAlertEvent(e.type));
  if (relevant.length === 0) return;
  const tenants = [...new Set(relevant.map((e) => e.tenant_id))];
  const alerts = await trx
    .selectFrom('alerts')
    .selectAll()
    .where('tenant_id', 'in', tenants)
    .where('active', '=', 1)
    .where(
      'event',
      'in',
      relevant.map((e) => e.type),
    )
    .execute();
  if (alerts.length === 0) return;
  // Each alert's lists parsed once per batch, not once per event.
  const watching = alerts.map((alert) => ({ alert, lists: [alert.account_ids, alert.segment_ids, alert.page_ids].map(idSet) }));
  const payloads = await eventPayloads(
    trx,
    relevant.map((e) => e.id),
  );
  const bodies = payloads.map(({ id, payload }) => ({ id, body: JSON.parse(payload) as EventBody }));
  const flagged = await sentWithGpc(trx, bodies);
  const messages: AlertMessagesTable[] = [];
  for (const { id, body } of bodies) {
    const event = relevant.find((e) => e.id === id);
    if (!event) continue;
    // The one exit rule (events/may-leave.ts): a visitor's Global Privacy Control is not sent, and
    // not counted in a message either.
    if (!mayLeave({ exit: 'alert.slack', gpc: flagged.has(id) })) continue;
    const facts = await factsOf(trx, event.tenant_id, body.type, body.data);
    for (const { alert, lists } of watching) {
      if (alert.tenant_id !== event.tenant_id || alert.event !== body.type || !matches(lists, facts)) continue;
      const more = await turnWindow(trx, alert.id, facts.accountId ?? '', body.timestamp.slice(0, 13));
      if (more !== undefined) messages.push(newMessage(alert, body.type, facts, more));
    }
  }
  if (messages.length > 0) await trx.insertInto('alert_messages').values(messages).execute();
};

type EventBody = { type: string; timestamp: string; data: Record<string, unknown> };

/**
 * The events of a visit or a lead that came with `Sec-GPC: 1` (the session's `gpc`, migration
 * 0043; the lead's, migration 0038): read when the event is fanned out, after the transaction that
 * emitted it and marked its session or lead.
 */
async function sentWithGpc(db: Kysely<Database>, bodies: { id: string; body: EventBody }[]): Promise<Set<string>> {
  const sessionOf = new Map<string, string>();
  const leadOf = new Map<string, string>();
  for (const { id, body } of bodies) {
    const session = str(body.data.audienceSessionId);
    const lead = str(body.data.formSubmissionId);
    if (body.type === 'visit.started' && session) sessionOf.set(id, session);
    if (body.type === 'form.submitted' && lead) leadOf.set(id, lead);
  }
  const flagged = new Set<string>();
  if (sessionOf.size > 0) {
    for (const id of await sessionsSentWithGpc(db, [...new Set(sessionOf.values())])) flagged.add(id);
  }
  if (leadOf.size > 0) {
    for (const id of await leadsSentWithGpc(db, [...new Set(leadOf.values())])) flagged.add(id);
  }
  const withheld = new Set<string>();
  for (const [event, id] of [...sessionOf, ...leadOf]) if (flagged.has(id)) withheld.add(event);
  return withheld;
}

async function factsOf(db: Kysely<Database>, tenantId: string, type: string, data: Record<string, unknown>): Promise<Facts> {
  const personId = str(data.personId);
  // visit.started names the account already; a lead names its person only.
  const accountId = str(data.accountId) ?? (personId ? await accountOfPerson(db, tenantId, personId) : null);
  return {
    eventType: type,
    personId,
    accountId,
    pageId: str(data.pageId),
    audienceId: str(data.audienceId),
    path: str(data.path),
    channel: str(data.channel),
    audienceSessionId: str(data.audienceSessionId),
    formSubmissionId: str(data.formSubmissionId),
  };
}

/** A stored id list (JSON), or null for "any". */
const idSet = (json: string | null): Set<string> | null => (json === null ? null : new Set(JSON.parse(json) as string[]));

/** Accounts, segments (the audience), pages: each list given must hold the event's id. */
function matches(lists: (Set<string> | null)[], facts: Facts): boolean {
  const [accounts, segments, pages] = lists;
  const within = (set: Set<string> | null | undefined, id: string | null) => !set || (id !== null && set.has(id));
  return within(accounts, facts.accountId) && within(segments, facts.audienceId) && within(pages, facts.pageId);
}

/**
 * Counts one matching event in the (alert, account) window of `hour`: the count of the hour before
 * when this event opens a new hour (it gets a message that says so), undefined when the hour
 * already had its message. SET reads the row as it was, on both databases, so `carried` takes the
 * old `more` in the same statement that turns the hour.
 */
async function turnWindow(trx: Transaction<Database>, alertId: string, accountKey: string, hour: string): Promise<number | undefined> {
  await trx
    .insertInto('alert_windows')
    .values({ alert_id: alertId, account_key: accountKey, hour: '', more: 0, carried: 0 })
    .onConflict((oc) => oc.columns(['alert_id', 'account_key']).doNothing())
    .execute();
  const turned = await trx
    .updateTable('alert_windows')
    .set({
      carried: sql<number>`case when hour = ${hour} then carried else more end`,
      more: sql<number>`case when hour = ${hour} then more + 1 else 0 end`,
      hour,
    })
    .where('alert_id', '=', alertId)
    .where('account_key', '=', accountKey)
    .returning(['more', 'carried'])
    .executeTakeFirstOrThrow();
  return Number(turned.more) === 0 ? Number(turned.carried) : undefined;
}
