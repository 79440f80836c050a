import { sql, type Kysely } from 'kysely';
import { CACHES, databaseCache } from '../db/caches.js';
import { isPostgres } from '../db/adapter.js';
import { prepared } from '../db/prepared.js';
import type { Database } from '../db/types.js';
import { now } from '../time.js';

/**
 * Sticky units (issue 36): a unit's arm is fixed at its first exposure, stored per experiment and
 * unit, and kept whatever the weights become; new weights apply to new units only. The stored arm
 * never changes, so this process keeps every arm it has read or made (an LRU: an entry is never
 * stale, only unused) and a unit it knows costs no statement at all.
 */
const known = databaseCache<string>(CACHES.experimentArms);

interface UnitParams {
  experimentId: string;
  unit: string;
  arm: string;
  at: string;
}

/**
 * PostgreSQL, one statement: insert the unit if absent, else read its arm. When another instance
 * inserts the same unit at the same moment, the insert waits for it and does nothing, and the read
 * (from the statement's snapshot, taken before) may miss it: no row then, and `storedArm` reads again.
 */
const insertOrRead = prepared((db, p: UnitParams) => ({
  compile: () =>
    sql<{ arm: string }>`
      with made as (
        insert into experiment_units (experiment_id, unit, arm, assigned_at)
        values (${p.experimentId}, ${p.unit}, ${p.arm}, cast(${p.at} as timestamptz))
        on conflict (experiment_id, unit) do nothing
        returning arm
      )
      select arm from made
      union all
      select arm from experiment_units where experiment_id = ${p.experimentId} and unit = ${p.unit}
      limit 1`.compile(db),
}));

/** SQLite: writes are serialised (one writer at a time, any process), so the insert either makes the row or finds it made. */
const insertIfAbsent = prepared((db, p: UnitParams) =>
  db
    .insertInto('experiment_units')
    .values({ experiment_id: p.experimentId, unit: p.unit, arm: p.arm, assigned_at: p.at })
    .onConflict((oc) => oc.columns(['experiment_id', 'unit']).doNothing())
    .returning('arm'),
);

const readArm = prepared((db, p: Pick<UnitParams, 'experimentId' | 'unit'>) =>
  db.selectFrom('experiment_units').select('arm').where('experiment_id', '=', p.experimentId).where('unit', '=', p.unit),
);

/**
 * The unit's arm in the experiment: the stored one, else `candidate` (the weighted bucket under the
 * current weights), stored now. Two instances asking at once for the same new unit get the same
 * arm: the first insert wins and both read it back. At most one statement on PostgreSQL (two in the
 * rare race); on SQLite, where a read costs microseconds and a write a commit, a read first.
 */
export async function stickyArm(db: Kysely<Database>, experimentId: string, unit: string, candidate: string): Promise<string> {
  const cache = known(db);
  const key = `${experimentId}\n${unit}`;
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  const params = { experimentId, unit, arm: candidate, at: now() };
  let arm: string | undefined;
  if (isPostgres(db)) {
    arm = (await insertOrRead(db, params))[0]?.arm ?? (await readArm(db, params))[0]?.arm;
  } else {
    arm = (await readArm(db, params))[0]?.arm;
    arm ??= (await insertIfAbsent(db, params))[0]?.arm ?? (await readArm(db, params))[0]?.arm;
  }
  // The row exists once either statement ran; should it not (an experiment deleted under us), serve the bucket.
  if (arm === undefined) return candidate;
  cache.set(key, arm);
  return arm;
}
