import type { RawBuilder, Transaction } from 'kysely';
import { noteChange } from '../db/changes.js';
import type { GoalKind } from '../db/enums.js';
import type { Database, VisitEventsTable } from '../db/types.js';

/** At most this many rows per visit (its path, its form and its deepest scroll, then the clicked purposes and tracked events as they come). */
export const MAX_OCCURRENCES_PER_VISIT = 35;
/** At most this many times one purpose or event counts in a visit; a tracked value at most this much per call. */
export const MAX_COUNT = 1000;
export const MAX_VALUE = 1_000_000_000;

/**
 * What a report or a form says happened in a visit. `total`: the count so far (the script reports
 * totals: a lost report costs nothing); `add`: one more (a form sent).
 */
export type Occurrence = { kind: GoalKind; name: string; value: number } & ({ total: number } | { add: number });

/** The visit's session, as its occurrences copy it. */
export interface VisitOf {
  sessionId: string;
  tenantId: string;
  pageId: string;
  audienceId: string;
  sessionStartedAt: string;
}

/**
 * Stores a visit's occurrences in the caller's transaction (which holds the visit's lock): a count
 * only rises, by no more than `MAX_COUNT` in all, and a value follows its count; a kind and name
 * the visit does not have yet is added while the visit has fewer than `MAX_OCCURRENCES_PER_VISIT`.
 * Nothing is written when nothing changed (the script repeats its totals in every report).
 */
export async function recordOccurrences(trx: Transaction<Database>, visit: VisitOf, occurrences: Occurrence[], at: string): Promise<void> {
  if (occurrences.length === 0) return;
  const stored = await trx
    .selectFrom('visit_events')
    .select(['kind', 'name', 'count', 'value', 'first_at'])
    .where('session_id', '=', visit.sessionId)
    .execute();
  const byKey = new Map(stored.map((r) => [`${r.kind}\n${r.name}`, r]));
  let rows = stored.length;
  const writes = new Map<string, VisitEventsTable>();
  for (const o of occurrences) {
    const key = `${o.kind}\n${o.name}`;
    const before = writes.get(key) ?? byKey.get(key);
    const stored = Number(before?.count ?? 0);
    // A total no higher than the stored one says nothing new (a report that lost a call, or a hostile one).
    if ('total' in o && before && o.total <= stored) continue;
    const count = Math.min(MAX_COUNT, 'add' in o ? stored + o.add : o.total);
    const value = Math.min(o.value, count * MAX_VALUE);
    if (before && count === stored) continue;
    if (!before && rows >= MAX_OCCURRENCES_PER_VISIT) continue;
    if (!before) rows++;
    writes.set(key, {
      session_id: visit.sessionId,
      kind: o.kind,
      name: o.name,
      tenant_id: visit.tenantId,
      page_id: visit.pageId,
      audience_id: visit.audienceId,
      session_started_at: visit.sessionStartedAt,
      first_at: before?.first_at ?? at,
      count,
      value: 'add' in o ? Number(before?.value ?? 0) + value : value,
    });
  }
  if (writes.size === 0) return;
  // Funnel results are kept while the tenant's sessions stand still (src/funnels/results.ts).
  await noteChange(trx, `sessions:${visit.tenantId}`);
  await trx
    .insertInto('visit_events')
    .values([...writes.values()])
    .onConflict((oc) =>
      oc
        .columns(['session_id', 'kind', 'name'])
        .doUpdateSet((eb) => ({ count: eb.ref('excluded.count'), value: eb.ref('excluded.value') })),
    )
    .execute();
}

/**
 * Erasure (src/persons/erasure.ts): the occurrences of the tenant's visits whose name (a tracked
 * event's, a clicked action's purpose) mentions the person go. A name is all such a row holds, so
 * the row goes with it; the visit keeps its other occurrences and its counts.
 */
export async function forgetOccurrencesNaming(
  trx: Transaction<Database>,
  tenantId: string,
  mentions: { test(text: string): boolean; mayMention(column: string): RawBuilder<boolean> },
): Promise<void> {
  const rows = await trx
    .selectFrom('visit_events')
    .select(['session_id', 'kind', 'name'])
    .where('tenant_id', '=', tenantId)
    .where(mentions.mayMention('name'))
    .execute();
  const naming = rows.filter((r) => mentions.test(r.name));
  if (naming.length === 0) return;
  await noteChange(trx, `sessions:${tenantId}`);
  for (const r of naming) {
    await trx
      .deleteFrom('visit_events')
      .where('session_id', '=', r.session_id)
      .where('kind', '=', r.kind)
      .where('name', '=', r.name)
      .execute();
  }
}
