import { sql, type Kysely, type Transaction } from 'kysely';
import { claimLeases } from '../db/lease.js';
import type { AudienceVersionsTable, Database } from '../db/types.js';
import type { Content } from '../pages/index.js';
import { timesOfMove } from './lifecycle.js';
import { moveVersion, publishedTogether } from './publishing.js';
import { toVersion } from './version-row.js';
import { emitMany, type EventToEmit } from '../events/index.js';
import { now } from '../time.js';

// The page agent's writes of versions (src/agent/): its claims, its lease and what it made of each.

/**
 * Up to `limit` versions waiting for the agent, now held until `until`: queued ones, and processing
 * ones nobody holds (a crashed holder's, one waiting for its retry time, one a client moved to
 * processing). Round-robin across tenants, oldest first within each: a tenant's k-th oldest waits
 * behind every other tenant's (k-1)-th, so a tenant's long queue holds another's back one claim at most.
 */
export function claimVersions(db: Kysely<Database>, limit: number, at: string, until: string) {
  return claimLeases(db, {
    table: 'audience_versions',
    lease: 'agent_lease_until',
    // The statuses written as literals, not parameters: only then may SQLite read the partial index
    // of the queue (audience_versions_agent_idx) instead of every version of every audience.
    due: (eb) =>
      eb.and([sql<boolean>`status in ('queued', 'processing')`, eb.or([eb('agent_retry_at', 'is', null), eb('agent_retry_at', '<=', at)])]),
    // Each tenant's first versions only, found through the same index: not the whole queue each claim.
    orderBy: { across: 'tenant_id', within: ['queued_at', 'id'] },
    limit,
    now: at,
    until,
  });
}

/** A version the agent holds: its row as claimed, and the lease end the claim set (the holder's token). */
export interface HeldVersion {
  version: AudienceVersionsTable;
  lease: string;
}

const audienceOf = (version: AudienceVersionsTable) => ({ id: version.audience_id, tenant_id: version.tenant_id });

/**
 * Each write below is conditional on the version being still processing and still under the
 * holder's lease, so a version cancelled meanwhile stays cancelled and one taken over after the
 * lease ran out is left to its new holder. Each returns whether it wrote.
 */
const held = (trx: Transaction<Database>, { version, lease }: HeldVersion) =>
  trx
    .updateTable('audience_versions')
    .where('id', '=', version.id)
    .where('status', '=', 'processing')
    .where('agent_lease_until', '=', lease);

/** Not generated (the agent stops): the version goes back for the next claim at once. */
export async function giveBackVersion(trx: Transaction<Database>, holding: HeldVersion): Promise<boolean> {
  const result = await held(trx, holding).set({ agent_lease_until: null }).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** A failed attempt to try again at `at`, counted. */
export async function retryVersionAt(trx: Transaction<Database>, holding: HeldVersion, at: string): Promise<boolean> {
  const result = await held(trx, holding)
    .set({ agent_lease_until: null, agent_attempts: sql<number>`agent_attempts + 1`, agent_retry_at: at })
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Moves the claimed queued versions to processing as moveVersion would (its conditional update,
 * queueDurationMs, its event), with the batch's events in one statement. Returns the versions still
 * the holder's to generate: one a client moved on since the claim is left out; one already
 * processing (a crashed holder's, a retry) stays as it is.
 */
export async function startGenerations(trx: Transaction<Database>, versions: readonly AudienceVersionsTable[]) {
  const at = now();
  const ours: AudienceVersionsTable[] = [];
  const events: EventToEmit[] = [];
  for (const version of versions) {
    if (version.status !== 'queued') {
      ours.push(version);
      continue;
    }
    const moved = await trx
      .updateTable('audience_versions')
      .set({ status: 'processing', ...timesOfMove('queued', 'processing', version, at) })
      .where('id', '=', version.id)
      .where('status', '=', 'queued')
      .returningAll()
      .executeTakeFirst();
    if (!moved) continue;
    ours.push({ ...version, status: 'processing' });
    events.push({
      tenantId: moved.tenant_id,
      type: 'audience_version.status_changed',
      data: toVersion(moved),
      extra: { previousStatus: 'queued' },
    });
  }
  await emitMany(trx, events);
  return ours;
}

/**
 * Generated contents, published together: each version that is still processing under its holder's
 * lease gets its content and becomes published in one statement, then publishedTogether archives,
 * serves and tells for the whole batch what moveVersion would for each. Returns those written.
 */
export async function publishGenerations<T extends HeldVersion & { content: Content }>(
  trx: Transaction<Database>,
  generated: readonly T[],
): Promise<Set<T>> {
  const at = now();
  const written = new Set<T>();
  const published: AudienceVersionsTable[] = [];
  for (const holding of generated) {
    const row = await held(trx, holding)
      .set({
        agent_lease_until: null,
        agent_retry_at: null,
        failure_reason: null,
        content: JSON.stringify(holding.content),
        origin: 'generated' as const,
        status: 'published' as const,
        ...timesOfMove('processing', 'published', holding.version, at),
      })
      .returningAll()
      .executeTakeFirst();
    if (!row) continue;
    written.add(holding);
    published.push(row);
  }
  await publishedTogether(trx, published, 'processing', at);
  return written;
}

/** The failure, counted, and the version cancelled through the lifecycle (moveVersion: its event, cancelledAt). */
export async function failGeneration(trx: Transaction<Database>, holding: HeldVersion, reason: string): Promise<boolean> {
  const row = await held(trx, holding)
    .set({ agent_lease_until: null, agent_retry_at: null, failure_reason: reason, agent_attempts: sql<number>`agent_attempts + 1` })
    .returningAll()
    .executeTakeFirst();
  if (!row) return false;
  await moveVersion(trx, audienceOf(row), row, 'cancelled');
  return true;
}
