import { sql, type Kysely, type Transaction } from 'kysely';
import { moveVersion } from '../audiences/versions.js';
import { claimLeases } from '../db/lease.js';
import type { AudienceVersionsTable, Database } from '../db/types.js';
import { AppError } from '../http/errors.js';
import type { Content } from '../pages/schemas.js';

/** What became of one claimed version's generation. */
export type Outcome =
  | { kind: 'publish'; version: AudienceVersionsTable; lease: string; content: Content }
  | { kind: 'retry'; version: AudienceVersionsTable; lease: string; at: string; reason: string }
  | { kind: 'fail'; version: AudienceVersionsTable; lease: string; reason: string }
  /** Not generated (the worker stops): the version goes back for the next claim at once. */
  | { kind: 'give-back'; version: AudienceVersionsTable; lease: string };

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
    orderBy: [sql`row_number() over (partition by tenant_id order by queued_at, id)`, 'queued_at', 'id'],
    limit,
    now: at,
    until,
  });
}

const audienceOf = (version: AudienceVersionsTable) => ({ id: version.audience_id, tenant_id: version.tenant_id });

/**
 * Moves the claimed queued versions to processing (the lifecycle's move, its event and
 * queueDurationMs), in one transaction for the batch. Returns the versions still this worker's to
 * generate: a version cancelled (or moved on by a client) since the claim is left out.
 */
export async function startProcessing(trx: Transaction<Database>, versions: AudienceVersionsTable[]): Promise<AudienceVersionsTable[]> {
  const ours: AudienceVersionsTable[] = [];
  for (const version of versions) {
    if (version.status !== 'queued') {
      ours.push(version);
      continue;
    }
    try {
      await moveVersion(trx, audienceOf(version), version, 'processing');
    } catch (err) {
      // The move is conditional on the status claimed: a client's change won, and nothing was written.
      if (err instanceof AppError) continue;
      throw err;
    }
    ours.push({ ...version, status: 'processing' });
  }
  return ours;
}

/**
 * Writes a batch of outcomes in one transaction. Each write is conditional on the version being
 * still processing and still under this worker's lease, so a version cancelled meanwhile stays
 * cancelled and one taken over after the lease ran out is left to its new holder (the late result
 * is dropped). Publishing and cancelling go through the lifecycle (moveVersion): events,
 * publishedAt, archiving the older published version. Returns the outcomes that were written.
 */
export async function writeOutcomes(trx: Transaction<Database>, outcomes: Outcome[]): Promise<Set<Outcome>> {
  const written = new Set<Outcome>();
  // The same order in every worker, so two transactions on PostgreSQL never wait on each other in a circle.
  const sorted = [...outcomes].sort((a, b) => (a.version.audience_id < b.version.audience_id ? -1 : 1));
  for (const outcome of sorted) {
    const held = trx
      .updateTable('audience_versions')
      .where('id', '=', outcome.version.id)
      .where('status', '=', 'processing')
      .where('agent_lease_until', '=', outcome.lease);
    if (outcome.kind === 'give-back') {
      const result = await held.set({ agent_lease_until: null }).executeTakeFirst();
      if (Number(result.numUpdatedRows) > 0) written.add(outcome);
      continue;
    }
    if (outcome.kind === 'retry') {
      const result = await held
        .set({ agent_lease_until: null, agent_attempts: sql<number>`agent_attempts + 1`, agent_retry_at: outcome.at })
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) > 0) written.add(outcome);
      continue;
    }
    const row = await held
      .set(
        outcome.kind === 'publish'
          ? { agent_lease_until: null, agent_retry_at: null, failure_reason: null, content: JSON.stringify(outcome.content) }
          : {
              agent_lease_until: null,
              agent_retry_at: null,
              failure_reason: outcome.reason,
              agent_attempts: sql<number>`agent_attempts + 1`,
            },
      )
      .returningAll()
      .executeTakeFirst();
    if (!row) continue;
    await moveVersion(trx, audienceOf(row), row, outcome.kind === 'publish' ? 'published' : 'cancelled');
    written.add(outcome);
  }
  return written;
}
