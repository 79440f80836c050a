import type { Transaction } from 'kysely';
import { failGeneration, giveBackVersion, publishGenerations, retryVersionAt } from '../audiences/index.js';
import type { AudienceVersionsTable, Database } from '../db/types.js';
import type { Content } from '../pages/index.js';

/** What became of one claimed version's generation. */
export type Outcome =
  | { kind: 'publish'; version: AudienceVersionsTable; lease: string; content: Content }
  | { kind: 'retry'; version: AudienceVersionsTable; lease: string; at: string; reason: string }
  | { kind: 'fail'; version: AudienceVersionsTable; lease: string; reason: string }
  /** Not generated (the worker stops): the version goes back for the next claim at once. */
  | { kind: 'give-back'; version: AudienceVersionsTable; lease: string };

/**
 * Writes a batch of outcomes in one transaction, through the audiences' functions, which write
 * only while the version is still processing under this worker's lease (a late result is dropped):
 * the publications together, the rest one by one. Returns the outcomes that were written.
 */
export async function writeOutcomes(trx: Transaction<Database>, outcomes: Outcome[]): Promise<Set<Outcome>> {
  // The same order in every worker, so two transactions on PostgreSQL never wait on each other in a circle.
  const sorted = [...outcomes].sort((a, b) => (a.version.audience_id < b.version.audience_id ? -1 : 1));
  const publications = sorted.filter((o): o is Extract<Outcome, { kind: 'publish' }> => o.kind === 'publish');
  const written: Set<Outcome> = await publishGenerations(trx, publications);
  for (const outcome of sorted) {
    if (outcome.kind === 'publish') continue;
    const wrote =
      outcome.kind === 'give-back'
        ? await giveBackVersion(trx, outcome)
        : outcome.kind === 'retry'
          ? await retryVersionAt(trx, outcome, outcome.at)
          : await failGeneration(trx, outcome, outcome.reason);
    if (wrote) written.add(outcome);
  }
  return written;
}
