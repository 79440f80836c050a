import type { Kysely, Transaction } from 'kysely';
import { byTenantAndId, tenantAndIdIn, type TenantRowKey } from '../db/batch.js';
import { prepared } from '../db/prepared.js';
import type { Database, FunnelsTable } from '../db/types.js';
import { checkTargetPage, resolveTarget, type Target, targetFields } from '../goals/index.js';
import { invalidField } from '../http/errors.js';
import { keysetList, NEWEST_FIRST } from '../http/pagination.js';
import { settle } from '../http/round-trip.js';
import { newId } from '../ids.js';
import { after, now } from '../time.js';
import {
  DEFAULT_WINDOW_HOURS,
  type Funnel,
  type FunnelCreate,
  type FunnelListQuery,
  type FunnelStepInput,
  FunnelUpdate,
} from './schemas.js';

/** A step as stored in `funnels.steps`. */
export interface StoredStep extends Target {
  name: string;
}

export const stepsOf = (row: FunnelsTable): StoredStep[] => JSON.parse(row.steps) as StoredStep[];

export const toFunnel = (row: FunnelsTable): Funnel => ({
  funnelId: row.id,
  name: row.name,
  steps: stepsOf(row).map((s) => ({ name: s.name, ...targetFields(s) })),
  windowHours: Number(row.window_hours),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** What a step counts, in words: its name when the client gives none. */
function describe(t: Target): string {
  switch (t.kind) {
    case 'form':
      return 'Lead form sent';
    case 'action':
      return `Clicked ${t.target}`;
    case 'path':
      return `Visited ${t.target}`;
    case 'event':
      return t.target;
    case 'scroll':
      return `Scrolled ${t.threshold}% on ${t.target}`;
  }
}

async function resolveSteps(db: Kysely<Database>, tenantId: string, steps: FunnelStepInput[]): Promise<StoredStep[]> {
  const resolved = steps.map((step, i) => {
    // A scroll goal has a depth besides its path: a goal of its own, not a step (issue 49).
    if (step.kind === 'scroll') throw invalidField(`/steps/${i}/kind`, 'scroll is for goals, not funnel steps');
    const target = resolveTarget(step, `/steps/${i}`);
    return { name: step.name ?? describe(target), ...target };
  });
  for (const [i, step] of resolved.entries()) await checkTargetPage(db, tenantId, step, `/steps/${i}`);
  return resolved;
}

export async function createFunnel(trx: Transaction<Database>, tenantId: string, input: FunnelCreate): Promise<Funnel> {
  const steps = await resolveSteps(trx, tenantId, input.steps);
  const at = now();
  const row: FunnelsTable = {
    id: newId('funnel'),
    tenant_id: tenantId,
    name: input.name,
    steps: JSON.stringify(steps),
    window_hours: input.windowHours ?? DEFAULT_WINDOW_HOURS,
    created_at: at,
    updated_at: at,
  };
  await trx.insertInto('funnels').values(row).execute();
  return toFunnel(row);
}

export function findFunnel(db: Kysely<Database>, tenantId: string, funnelId: string): Promise<FunnelsTable | undefined> {
  return readFunnel(db, { tenantId, id: funnelId });
}

/** Read before every kept answer of its results: concurrent requests share a statement on PostgreSQL (db/batch.ts). */
const readFunnel = byTenantAndId(
  prepared((db, p: TenantRowKey) => db.selectFrom('funnels').selectAll().where('id', '=', p.id).where('tenant_id', '=', p.tenantId)),
  prepared((db, p: { tenantIds: string[]; ids: string[] }) =>
    db.selectFrom('funnels').selectAll().where(tenantAndIdIn(p.tenantIds, p.ids)),
  ),
);

/** Only the fields present change; `steps` replaces the steps whole. */
export async function updateFunnel(trx: Transaction<Database>, current: FunnelsTable, body: FunnelUpdate): Promise<Funnel> {
  const shown = toFunnel(current);
  const patch = settle(FunnelUpdate, body, shown);
  const changes: Partial<FunnelsTable> = {};
  if (patch.name !== undefined) changes.name = patch.name;
  if (patch.windowHours !== undefined) changes.window_hours = patch.windowHours;
  if (patch.steps !== undefined) changes.steps = JSON.stringify(await resolveSteps(trx, current.tenant_id, patch.steps));
  if (changes.steps === current.steps) delete changes.steps;
  if (Object.keys(changes).length === 0) return shown;
  changes.updated_at = after(current.updated_at);
  const row = await trx.updateTable('funnels').set(changes).where('id', '=', current.id).returningAll().executeTakeFirstOrThrow();
  return toFunnel(row);
}

export async function deleteFunnel(trx: Transaction<Database>, current: FunnelsTable): Promise<void> {
  await trx.deleteFrom('funnels').where('id', '=', current.id).execute();
}

const funnelsList = keysetList({ name: 'funnels', table: 'funnels', ...NEWEST_FIRST });

export async function listFunnels(db: Kysely<Database>, tenantId: string, query: FunnelListQuery) {
  const matching = db.selectFrom('funnels').where('tenant_id', '=', tenantId);
  return funnelsList.read({ query, rows: matching.selectAll(), count: matching, map: toFunnel });
}
