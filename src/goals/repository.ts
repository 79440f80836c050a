import type { Kysely, Transaction } from 'kysely';
import type { Database, GoalsTable } from '../db/types.js';
import { invalidField } from '../http/errors.js';
import { keysetList, NEWEST_FIRST } from '../http/pagination.js';
import { settle } from '../http/round-trip.js';
import { newId } from '../ids.js';
import { findPage } from '../pages/index.js';
import { after, now } from '../time.js';
import { checkCurrency, KIND_FIELD, likeOfGlob, resolveTarget, type Target, type TargetValues, targetFields } from './rules.js';
import { DEFAULT_MAX_VALUE, type Goal, type GoalCreate, type GoalListQuery, GoalUpdate } from './schemas.js';

export const toGoal = (row: GoalsTable): Goal => ({
  goalId: row.id,
  name: row.name,
  ...targetFields({ kind: row.kind, target: row.target, pageId: row.page_id }),
  pathPattern: row.kind === 'scroll' ? row.target : null,
  threshold: row.kind === 'scroll' ? row.threshold : null,
  currency: row.currency,
  maxValue: row.max_value,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** A scroll goal's depth and its glob as LIKE (goals/sql.ts matches them); null for the other kinds. */
const scrollColumns = (t: Target): Pick<GoalsTable, 'threshold' | 'path_like'> =>
  t.kind === 'scroll' ? { threshold: t.threshold ?? null, path_like: likeOfGlob(t.target) } : { threshold: null, path_like: null };

/** A form's page must be a live page of the tenant (400 at `<at>/pageId` otherwise). */
export async function checkTargetPage(db: Kysely<Database>, tenantId: string, target: Target, at = ''): Promise<void> {
  if (target.pageId !== null && !(await findPage(db, tenantId, target.pageId))) {
    throw invalidField(`${at}/pageId`, 'is not a page of this tenant');
  }
}

export async function createGoal(trx: Transaction<Database>, tenantId: string, input: GoalCreate): Promise<Goal> {
  const target = resolveTarget(input);
  const currency = checkCurrency(input.currency);
  await checkTargetPage(trx, tenantId, target);
  const at = now();
  const row: GoalsTable = {
    id: newId('goal'),
    tenant_id: tenantId,
    name: input.name,
    kind: target.kind,
    target: target.target,
    page_id: target.pageId,
    currency,
    max_value: input.maxValue ?? DEFAULT_MAX_VALUE,
    ...scrollColumns(target),
    created_at: at,
    updated_at: at,
  };
  await trx.insertInto('goals').values(row).execute();
  return toGoal(row);
}

export function findGoal(db: Kysely<Database>, tenantId: string, goalId: string) {
  return db.selectFrom('goals').selectAll().where('id', '=', goalId).where('tenant_id', '=', tenantId).executeTakeFirst();
}

/**
 * Only the fields present change. A new `kind` clears the fields of the other kinds the body does
 * not give, so `{ kind, <its field> }` is enough to change what a goal counts.
 */
export async function updateGoal(trx: Transaction<Database>, current: GoalsTable, body: GoalUpdate): Promise<Goal> {
  const shown = toGoal(current);
  const patch = settle(GoalUpdate, body, shown);
  const kind = patch.kind ?? current.kind;
  const values: TargetValues = { kind };
  for (const field of Object.values(KIND_FIELD)) {
    const given = patch[field];
    values[field] = given !== undefined ? given : kind === current.kind || field === KIND_FIELD[kind] ? shown[field] : null;
  }
  values.threshold = patch.threshold !== undefined ? patch.threshold : kind === current.kind ? shown.threshold : null;
  // A field equal to its stored value is left out of the patch; it is still the body's, as sent.
  for (const field of Object.values(KIND_FIELD)) if (body[field] !== undefined) values[field] = body[field];
  if (body.threshold !== undefined) values.threshold = body.threshold;
  const target = resolveTarget(values);
  if (target.pageId !== current.page_id) await checkTargetPage(trx, current.tenant_id, target);
  const changes: Partial<GoalsTable> = {};
  if (patch.name !== undefined) changes.name = patch.name;
  if (patch.currency !== undefined) changes.currency = checkCurrency(patch.currency);
  if (patch.maxValue !== undefined) changes.max_value = patch.maxValue;
  if (target.kind !== current.kind) changes.kind = target.kind;
  if (target.target !== current.target) changes.target = target.target;
  if (target.pageId !== current.page_id) changes.page_id = target.pageId;
  const scroll = scrollColumns(target);
  if (scroll.threshold !== current.threshold || scroll.path_like !== current.path_like) Object.assign(changes, scroll);
  if (Object.keys(changes).length === 0) return shown;
  changes.updated_at = after(current.updated_at);
  const row = await trx.updateTable('goals').set(changes).where('id', '=', current.id).returningAll().executeTakeFirstOrThrow();
  return toGoal(row);
}

export async function deleteGoal(trx: Transaction<Database>, current: GoalsTable): Promise<void> {
  await trx.deleteFrom('goals').where('id', '=', current.id).execute();
}

const goalsList = keysetList({ name: 'goals', table: 'goals', ...NEWEST_FIRST });

export async function listGoals(db: Kysely<Database>, tenantId: string, query: GoalListQuery) {
  const matching = db.selectFrom('goals').where('tenant_id', '=', tenantId);
  return goalsList.read({ query, rows: matching.selectAll(), count: matching, map: toGoal });
}
