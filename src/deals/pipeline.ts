import type { Kysely } from 'kysely';
import { resolveRange, DAY_MS } from '../analytics/ranges.js';
import { MAX_GROUPS } from '../audiences/groups.js';
import { CACHES, countedCache } from '../db/caches.js';
import type { Database } from '../db/types.js';
import { invalidField } from '../http/errors.js';
import {
  type CurrencySums,
  DEFAULT_WINDOW_DAYS,
  type Pipeline,
  type PipelineGroup,
  type PipelineGroupBy,
  type PipelineModel,
  type PipelineQuery,
  type PipelineTotals,
} from './pipeline-schemas.js';
import { checkWalk, walk, windowsOf } from './attribution.js';
import { type Touches, touchesOf } from './touches.js';

/**
 * The influenced pipeline (docs/analytics.md, "Influenced pipeline"). A deal is touched by a
 * session when the session's person belongs to the deal's account (the person of the session's
 * audience, or of a lead sent in that session; a person belongs to the account of its domain) and
 * the session started in [createdAt − windowDays, createdAt]. The touches of a range are read once
 * for every window (touches.ts); a model and a window are a walk over each deal's slice of them
 * (attribution.ts), which makes the sums per currency here.
 */

interface Ask {
  db: Kysely<Database>;
  tenantId: string;
  start: string;
  end: string;
  model: PipelineModel;
  windowDays: number;
  groupBy: PipelineGroupBy;
  experimentId: string | null;
}

export async function pipelineReport(db: Kysely<Database>, tenantId: string, query: PipelineQuery): Promise<Pipeline> {
  const nextMidnight = Math.floor(Date.now() / DAY_MS) * DAY_MS + DAY_MS;
  const range = resolveRange(query, nextMidnight, 'UTC');
  const groupBy = query.groupBy ?? 'page';
  const experimentId = query.experimentId ?? null;
  if (groupBy === 'arm' && experimentId === null) throw invalidField('/experimentId', 'is required with groupBy=arm');
  if (groupBy !== 'arm' && experimentId !== null) throw invalidField('/experimentId', 'is only taken with groupBy=arm');
  if (experimentId !== null) {
    const found = await db
      .selectFrom('experiments')
      .select('id')
      .where('id', '=', experimentId)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
    if (!found) throw invalidField('/experimentId', 'is not an experiment of this tenant');
  }
  const ask: Ask = {
    db,
    tenantId,
    start: new Date(range.start).toISOString(),
    end: new Date(range.end).toISOString(),
    model: query.model ?? 'any',
    windowDays: query.windowDays ?? DEFAULT_WINDOW_DAYS,
    groupBy,
    experimentId,
  };
  const key = [ask.start, ask.end, ask.model, ask.windowDays, groupBy, experimentId ?? ''].join(' ');
  return answers(db, tenantId, key, ask);
}

/**
 * Answers kept per tenant, query and the three counters a touch depends on: sessions (visits and
 * leads), the tenant's change sequence (persons, accounts, audiences, pages) and its deals; 10 s
 * at most. docs/contributing.md lists it.
 */
const answers = countedCache(CACHES.pipeline, compute);

/** Sums of deals in one currency. */
interface Acc {
  deals: number;
  cents: number;
  wonDeals: number;
  wonCents: number;
}

/** Per currency (by index into the touches' currencies), the sums kept lazily. */
type BySums = (Acc | undefined)[];

function add(sums: BySums, touches: Touches, deal: number, weight: number): void {
  const c = touches.currency[deal] as number;
  let acc = sums[c];
  if (!acc) {
    acc = { deals: 0, cents: 0, wonDeals: 0, wonCents: 0 };
    sums[c] = acc;
  }
  const cents = touches.cents[deal] as number;
  acc.deals += weight;
  acc.cents += cents * weight;
  if (touches.won[deal] === 1) {
    acc.wonDeals += weight;
    acc.wonCents += cents * weight;
  }
}

function totalsOf(sums: BySums, touches: Touches): PipelineTotals {
  const list: CurrencySums[] = [];
  let count = 0;
  let won = 0;
  sums.forEach((c, i) => {
    if (!c) return;
    const currency = touches.currencies[i] as string;
    list.push({ currency, deals: c.deals, amount: c.cents / 100, wonDeals: c.wonDeals, wonAmount: c.wonCents / 100 });
    count += c.deals;
    won += c.wonDeals;
  });
  list.sort((a, b) => (a.currency < b.currency ? -1 : 1));
  const one = list.length <= 1 ? list[0] : undefined;
  const several = list.length > 1;
  return {
    deals: count,
    amount: several ? null : (one?.amount ?? 0),
    wonDeals: won,
    wonAmount: several ? null : (one?.wonAmount ?? 0),
    byCurrency: list,
  };
}

async function compute(ask: Ask): Promise<Pipeline> {
  const touches = await touchesOf(ask);
  const windows = await windowsOf(touches, ask.windowDays * DAY_MS);
  checkWalk(ask.model, windows);
  const total: BySums = [];
  const byKey: BySums[] = [];
  await walk(
    ask.model,
    touches,
    windows,
    (deal) => add(total, touches, deal, 1),
    (deal, key, weight) => {
      let sums = byKey[key];
      if (!sums) {
        sums = [];
        byKey[key] = sums;
      }
      add(sums, touches, deal, weight);
    },
  );
  const ranked: Omit<PipelineGroup, 'label'>[] = [];
  byKey.forEach((sums, k) => {
    if (sums) ranked.push({ key: touches.keys[k] as string, ...totalsOf(sums, touches) });
  });
  // As every grouped answer of analytics: the top groups; the totals count every deal.
  const top = ranked.sort((a, b) => b.deals - a.deals || b.wonDeals - a.wonDeals || (a.key < b.key ? -1 : 1)).slice(0, MAX_GROUPS);
  const named = await labelsOf(
    ask.db,
    ask.tenantId,
    ask.groupBy,
    top.map((g) => g.key),
  );
  const groups: PipelineGroup[] = top.map(({ key, ...sums }) => ({ key, label: named.get(key) ?? key, ...sums }));
  const totals = totalsOf(total, touches);
  const only = totals.byCurrency.length === 1 ? (totals.byCurrency[0]?.currency ?? null) : null;
  return {
    startDate: ask.start,
    endDate: ask.end,
    model: ask.model,
    windowDays: ask.windowDays,
    groupBy: ask.groupBy,
    experimentId: ask.experimentId,
    currency: only,
    totals,
    groups,
  };
}

/** The labels of some groups: a page's or an audience's name, an arm's key. */
export async function labelsOf(
  db: Kysely<Database>,
  tenantId: string,
  groupBy: PipelineGroupBy,
  keys: string[],
): Promise<Map<string, string>> {
  if (keys.length === 0 || groupBy === 'arm') return new Map(keys.map((k) => [k, k]));
  const rows =
    groupBy === 'page'
      ? await db.selectFrom('pages').select(['id', 'name as label']).where('tenant_id', '=', tenantId).where('id', 'in', keys).execute()
      : await db
          .selectFrom('audiences')
          .select(['id', 'effective_name as label'])
          .where('tenant_id', '=', tenantId)
          .where('id', 'in', keys)
          .execute();
  return new Map(rows.map((r) => [r.id, r.label]));
}
