import { type Kysely, type Transaction, sql } from 'kysely';
import { timesOfMove } from './lifecycle.js';
import { toVersion } from './version-row.js';
import { draftRow } from './versions.js';
import { isUniqueViolation } from '../db/errors.js';
import type { AudiencesTable, AudienceVersionsTable, Database, PagesTable } from '../db/types.js';
import { emitMany, type EventToEmit } from '../events/index.js';
import { AppError } from '../http/errors.js';
import { newId } from '../ids.js';
import { now } from '../time.js';

// What a regenerate request (agent/regenerate.ts) reads and writes of audiences and their versions:
// the bulk queueing of new versions lives with the tables it writes (src/db/owners.ts).

/**
 * Queues a new version of each audience (one batch of a regenerate request), carrying over the
 * latest version's `supplementaryContext`, `isNewPageAgent` and content: created as a draft and
 * moved to queued by the lifecycle's rules, with the two events a client's create and PATCH give.
 * A batch is a few statements whatever its size (one insert, two updates, the events).
 *
 * `regenerationKey` (a keyed request's) skips the audiences it already queued a version of, and
 * a unique index holds that against a concurrent copy of the request: its batch is refused with
 * 409 `idempotency_key_in_progress`. Returns how many versions were queued.
 */
export async function queueNewVersions(
  trx: Transaction<Database>,
  audiences: AudiencesTable[],
  regenerationKey: string | null,
): Promise<number> {
  if (audiences.length === 0) return 0;
  let todo = audiences;
  if (regenerationKey !== null) {
    const done = await trx
      .selectFrom('audience_versions')
      .select('audience_id')
      .where('regeneration_key', '=', regenerationKey)
      .where(
        'audience_id',
        'in',
        audiences.map((a) => a.id),
      )
      .execute();
    const skip = new Set(done.map((d) => d.audience_id));
    todo = audiences.filter((a) => !skip.has(a.id));
    if (todo.length === 0) return 0;
  }
  const ids = todo.map((a) => a.id);
  const latest = await trx
    .selectFrom('audience_versions')
    .selectAll()
    .where(
      'id',
      'in',
      todo.map((a) => a.latest_version_id),
    )
    .execute();
  const latestById = new Map(latest.map((v) => [v.id, v]));
  const at = now();
  const numbers = await trx
    .updateTable('audiences')
    .set({ version_seq: sql<number>`version_seq + 1`, updated_at: at })
    .where('id', 'in', ids)
    .returning(['id', 'version_seq'])
    .execute();
  const numberOf = new Map(numbers.map((n) => [n.id, Number(n.version_seq)]));
  const drafts: AudienceVersionsTable[] = todo.map((audience) => {
    const previous = latestById.get(audience.latest_version_id);
    const number = numberOf.get(audience.id);
    if (!previous || number === undefined) throw new Error(`audience ${audience.id} lost its latest version`);
    // The agent writes it: generated, whatever the content it carries over until then.
    return { ...draftRow(audience, newId('version'), number, at, { ...previous, origin: 'generated' }), regeneration_key: regenerationKey };
  });
  const queued = drafts.map(
    (draft): AudienceVersionsTable => ({ ...draft, status: 'queued', ...timesOfMove('draft', 'queued', draft, at) }),
  );
  try {
    // Chunks keep each statement under either database's limit on bound parameters.
    for (let i = 0; i < queued.length; i += 200) {
      await trx
        .insertInto('audience_versions')
        .values(queued.slice(i, i + 200))
        .execute();
    }
  } catch (err) {
    if (regenerationKey !== null && isUniqueViolation(err)) {
      throw new AppError(
        'idempotency_key_in_progress',
        'A request with this Idempotency-Key is still in progress; retry shortly',
        undefined,
        {
          'retry-after': '1',
        },
      );
    }
    throw err;
  }
  await trx
    .updateTable('audiences')
    .set((eb) => ({
      latest_version_id: eb
        .selectFrom('audience_versions as v')
        .select('v.id')
        .whereRef('v.audience_id', '=', 'audiences.id')
        .whereRef('v.version_number', '=', 'audiences.version_seq'),
    }))
    .where('id', 'in', ids)
    .execute();
  await emitMany(
    trx,
    drafts.flatMap((draft, i): EventToEmit[] => [
      { tenantId: draft.tenant_id, type: 'audience_version.created', data: toVersion(draft) },
      {
        tenantId: draft.tenant_id,
        type: 'audience_version.status_changed',
        data: toVersion(queued[i] as AudienceVersionsTable),
        extra: { previousStatus: 'draft' },
      },
    ]),
  );
  return queued.length;
}

/** How many versions a keyed regenerate request has queued (its answer, also after a retry). */
export async function countRegenerated(db: Kysely<Database>, regenerationKey: string): Promise<number> {
  const row = await db
    .selectFrom('audience_versions')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('regeneration_key', '=', regenerationKey)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * A request key is remembered 24 hours: versions older than that no longer count as its work, so a
 * key used again after it expired is a new request (they keep everything else).
 */
export async function forgetRegenerations(trx: Kysely<Database>, regenerationKey: string, olderThan: string): Promise<void> {
  await trx
    .updateTable('audience_versions')
    .set({ regeneration_key: null })
    .where('regeneration_key', '=', regenerationKey)
    .where('created_at', '<', olderThan)
    .execute();
}

/**
 * The audiences among `audiences` a page-wide regenerate leaves alone: those whose published
 * version, or whose latest version still being written (draft or pending), is `written` by a person.
 * An audience `regenerationKey`'s request already queued a version of is not among them: a retry
 * counts it as queued, as the first attempt did.
 */
export async function writtenAmong(
  db: Kysely<Database>,
  audiences: readonly AudiencesTable[],
  regenerationKey: string | null,
): Promise<Set<string>> {
  if (audiences.length === 0) return new Set();
  const rows = await db
    .selectFrom('audience_versions')
    .select(['id', 'audience_id', 'version_number', 'status', 'origin', 'regeneration_key'])
    .where(
      'audience_id',
      'in',
      audiences.map((a) => a.id),
    )
    .where((eb) =>
      eb.or([
        eb(
          'id',
          'in',
          audiences.map((a) => a.published_version_id),
        ),
        eb('status', 'in', ['draft', 'pending']),
        ...(regenerationKey === null ? [] : [eb('regeneration_key', '=', regenerationKey)]),
      ]),
    )
    .execute();
  const published = new Set(audiences.map((a) => a.published_version_id));
  const latestDraft = new Map<string, (typeof rows)[number]>();
  const written = new Set<string>();
  const done = new Set<string>();
  for (const row of rows) {
    if (regenerationKey !== null && row.regeneration_key === regenerationKey) done.add(row.audience_id);
    if (published.has(row.id) && row.origin === 'written') written.add(row.audience_id);
    if (row.status === 'draft' || row.status === 'pending') {
      const seen = latestDraft.get(row.audience_id);
      if (!seen || Number(seen.version_number) < Number(row.version_number)) latestDraft.set(row.audience_id, row);
    }
  }
  for (const [audienceId, draft] of latestDraft) if (draft.origin === 'written') written.add(audienceId);
  for (const audienceId of done) written.delete(audienceId);
  return written;
}

/** The page's live audiences: what a regenerate may queue. */
function liveAudiencesOf(db: Kysely<Database>, page: PagesTable) {
  return db
    .selectFrom('audiences')
    .selectAll()
    .where('page_id', '=', page.id)
    .where('tenant_id', '=', page.tenant_id)
    .where('archived_at', 'is', null);
}

/**
 * Live audiences of the page after `afterId`, up to `limit`, in the order of the page's index
 * (page, created, id): the batches of "every live audience". Each batch reads its own rows only.
 * In id order SQLite walked the ids of other pages' audiences or sorted all of this page's, as it
 * planned: the first batch held the event loop 290 ms at the bench's full scale. The row after
 * which to go on is read by its id, so PostgreSQL compares its own timestamps, not JS dates.
 */
export function liveAudiencesAfter(db: Kysely<Database>, page: PagesTable, afterId: string | null, limit: number) {
  return liveAudiencesOf(db, page)
    .$if(afterId !== null, (q) =>
      q.where(sql<boolean>`(audiences.created_at, audiences.id) > (select a.created_at, a.id from audiences a where a.id = ${afterId})`),
    )
    .orderBy('audiences.created_at')
    .orderBy('audiences.id')
    .limit(limit)
    .execute();
}

/** The live audiences of the page among `ids` (any order; ids of others are simply absent). */
export function liveAudiencesAmong(db: Kysely<Database>, page: PagesTable, ids: readonly string[]) {
  return liveAudiencesOf(db, page).where('id', 'in', ids).execute();
}
