import type { Kysely } from 'kysely';
import { resolveRange, DAY_MS } from '../analytics/index.js';
import { MAX_GROUPS } from '../audiences/index.js';
import { CACHES, countedCache } from '../db/caches.js';
import type { Database } from '../db/types.js';
import { invalidField } from '../http/errors.js';
import { experienceNames } from '../onsite/index.js';
import {
  type CurrencySums,
  DEFAULT_WINDOW_DAYS,
  type GroupCurrencySums,
  type Pipeline,
  type PipelineGroup,
  type PipelineGroupBy,
  type PipelineModel,
  type PipelineQuery,
  type PipelineTotals,
} from './pipeline-schemas.js';
import { checkWalk, walk, windowsOf } from './attribution.js';
import { largestRemainder } from './shares.js';
import { type Touches, touchesOf } from './touches.js';

/**
 * The influenced pipeline (docs/analytics.md, "Influenced pipeline"). A deal is touched by a
 * session when the session's person belongs to the deal's account (the person of the session's
 * audience, or of a lead sent in that session; a person belongs to the account of its domain) and
 * the session started in [createdAt − windowDays, createdAt]. The touches of a range are read once
 * for every window (touches.ts); a model and a window are a walk over each deal's slice of them
 * (attribution.ts), which makes the sums per currency here; the shares of the weighted models are
 * rounded at the end so that they keep their sums (shares.ts).
 */

interface Ask {
  db: Kysely<Database>;
  tenantId: string;
  start: string;
  end: string;
  model: PipelineModel;
  windowDays: number;
  /** time_decay's half-life; null with any other model. */
  halfLifeDays: number | null;
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
  const model = query.model ?? 'any';
  const windowDays = query.windowDays ?? DEFAULT_WINDOW_DAYS;
  if (model !== 'time_decay' && query.halfLifeDays !== undefined)
    throw invalidField('/halfLifeDays', 'is only taken with model=time_decay');
  const ask: Ask = {
    db,
    tenantId,
    start: new Date(range.start).toISOString(),
    end: new Date(range.end).toISOString(),
    model,
    windowDays,
    halfLifeDays: model === 'time_decay' ? (query.halfLifeDays ?? windowDays / 4) : null,
    groupBy,
    experimentId,
  };
  const key = [ask.start, ask.end, model, windowDays, ask.halfLifeDays ?? '', groupBy, experimentId ?? ''].join(' ');
  return answers(db, tenantId, key, ask);
}

/**
 * Answers kept per tenant, query and the three counters a touch depends on: sessions (visits and
 * leads), the tenant's change sequence (persons, accounts, audiences, pages) and its deals; 10 s
 * at most. docs/contributing.md lists it.
 */
const answers = countedCache(CACHES.pipeline, compute);

/**
 * Sums of deals in one currency; `share…` add up each deal's share of a group (1 for the totals)
 * and hold, once rounded, the shares in ten-thousandths of a deal and in cents.
 */
interface Acc {
  deals: number;
  cents: number;
  wonDeals: number;
  wonCents: number;
  share: number;
  shareCents: number;
  shareWonCents: number;
}

/** Per currency (by index into the touches' currencies), the sums kept lazily. */
type BySums = (Acc | undefined)[];

/** Counts a deal once in `sums`, with `share` of it. */
function add(sums: BySums, touches: Touches, deal: number, share: number): void {
  const c = touches.currency[deal] as number;
  let acc = sums[c];
  if (!acc) {
    acc = { deals: 0, cents: 0, wonDeals: 0, wonCents: 0, share: 0, shareCents: 0, shareWonCents: 0 };
    sums[c] = acc;
  }
  const cents = touches.cents[deal] as number;
  acc.deals += 1;
  acc.cents += cents;
  acc.share += share;
  acc.shareCents += cents * share;
  if (touches.won[deal] === 1) {
    acc.wonDeals += 1;
    acc.wonCents += cents;
    acc.shareWonCents += cents * share;
  }
}

const UNITS = 10_000;

/**
 * Rounds every group's shares, per currency, to ten-thousandths of a deal and to cents, keeping
 * the totals' sums (every touched deal hands out exactly 1); and returns each group's share of
 * deals across currencies, in ten-thousandths, by key. Groups go in key order, so that a tie
 * always goes the same way.
 */
function roundShares(byKey: BySums[], total: BySums): number[] {
  // Plain loops: a report rounds thousands of groups, and the spreads and iterators of each were a
  // fifth of answering it (issue 50, pipeline-cold).
  const held: number[] = [];
  const exact: number[] = [];
  for (let k = 0; k < byKey.length; k++) {
    const sums = byKey[k];
    if (sums === undefined) continue;
    let share = 0;
    for (const a of sums) if (a) share += a.share;
    held.push(k);
    exact.push(share * UNITS);
  }
  let touched = 0;
  for (const a of total) if (a) touched += a.deals;
  const across: number[] = [];
  const rounded = largestRemainder(exact, touched * UNITS);
  for (let i = 0; i < held.length; i++) across[held[i] as number] = rounded[i] as number;
  for (let c = 0; c < total.length; c++) {
    const whole = total[c];
    if (!whole) continue;
    const accs: Acc[] = [];
    for (const k of held) {
      const a = byKey[k]?.[c];
      if (a) accs.push(a);
    }
    const deals = largestRemainder(
      accs.map((a) => a.share * UNITS),
      whole.deals * UNITS,
    );
    const cents = largestRemainder(
      accs.map((a) => a.shareCents),
      whole.cents,
    );
    const won = largestRemainder(
      accs.map((a) => a.shareWonCents),
      whole.wonCents,
    );
    for (let i = 0; i < accs.length; i++) {
      const a = accs[i] as Acc;
      a.share = deals[i] as number;
      a.shareCents = cents[i] as number;
      a.shareWonCents = won[i] as number;
    }
  }
  return across;
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

/** A group's sums, its shares rounded (roundShares): `units` its share of deals across currencies. */
function groupOf(key: string, sums: BySums, touches: Touches, units: number): Omit<PipelineGroup, 'label'> {
  const plain = totalsOf(sums, touches);
  const byCurrency: GroupCurrencySums[] = plain.byCurrency.map((c) => {
    const acc = sums[touches.currencies.indexOf(c.currency)] as Acc;
    return {
      ...c,
      attributedDeals: acc.share / UNITS,
      attributedAmount: acc.shareCents / 100,
      attributedWonAmount: acc.shareWonCents / 100,
    };
  });
  const one = byCurrency.length === 1 ? byCurrency[0] : undefined;
  return {
    key,
    ...plain,
    attributedDeals: units / UNITS,
    attributedAmount: one ? one.attributedAmount : null,
    attributedWonAmount: one ? one.attributedWonAmount : null,
    byCurrency,
  };
}

/** linear, time_decay and position rank groups by their shares; any, first and last by deals, as before them. */
const SHARED = new Set<PipelineModel>(['linear', 'time_decay', 'position']);

/**
 * The walks of the reports being answered, one at a time in the order they came (issue 50). Given
 * the loop back every few milliseconds, fifty reports of a few tens of milliseconds each were all
 * walked together and all finished late (p99 3 s at 50 connections for a p50 of 1 s); in turn,
 * each finishes as soon as those before it have. Only the computation is in turn: a tenant's
 * touches, read for seconds, hold no other report.
 */
let lastTurn: Promise<unknown> = Promise.resolve();
function inTurn<T>(work: () => Promise<T>): Promise<T> {
  const run = lastTurn.then(work);
  lastTurn = run.catch(() => undefined);
  return run;
}

async function compute(ask: Ask): Promise<Pipeline> {
  const touches = await touchesOf(ask);
  const { groups: top, totals } = await inTurn(() => answerOf(ask, touches));
  const named = await labelsOf(
    ask.db,
    ask.tenantId,
    ask.groupBy,
    top.map((g) => g.key),
  );
  const groups: PipelineGroup[] = top.map((g) => ({ ...g, label: named.get(g.key) ?? g.key }));
  const only = totals.byCurrency.length === 1 ? (totals.byCurrency[0]?.currency ?? null) : null;
  return {
    startDate: ask.start,
    endDate: ask.end,
    model: ask.model,
    windowDays: ask.windowDays,
    halfLifeDays: ask.halfLifeDays,
    groupBy: ask.groupBy,
    experimentId: ask.experimentId,
    currency: only,
    totals,
    groups,
  };
}

/** The walk of one report over its touches: the top groups, unlabelled, and the totals. */
async function answerOf(ask: Ask, touches: Touches): Promise<{ groups: Omit<PipelineGroup, 'label'>[]; totals: PipelineTotals }> {
  const windows = await windowsOf(touches, ask.windowDays * DAY_MS);
  checkWalk(ask.model, windows);
  const total: BySums = [];
  const byKey: BySums[] = [];
  await walk(
    ask.model,
    (ask.halfLifeDays ?? 1) * DAY_MS,
    touches,
    windows,
    (deal) => add(total, touches, deal, 1),
    (deal, key, share) => {
      let sums = byKey[key];
      if (!sums) {
        sums = [];
        byKey[key] = sums;
      }
      add(sums, touches, deal, share);
    },
  );
  const units = roundShares(byKey, total);
  // As every grouped answer of analytics: the top groups; the totals count every deal. Ranked by
  // their counts first, so that only the groups answered are built (a tenant may have thousands).
  const held: number[] = [];
  const deals: number[] = [];
  const won: number[] = [];
  for (let k = 0; k < byKey.length; k++) {
    const sums = byKey[k];
    if (sums === undefined) continue;
    held.push(k);
    let d = 0;
    let w = 0;
    for (const a of sums) {
      if (!a) continue;
      d += a.deals;
      w += a.wonDeals;
    }
    deals[k] = d;
    won[k] = w;
  }
  const first = SHARED.has(ask.model) ? units : deals;
  // Keys are sorted (touches.ts), so their indexes order as they do.
  held.sort((a, b) => (first[b] as number) - (first[a] as number) || (won[b] as number) - (won[a] as number) || a - b);
  const groups = held.slice(0, MAX_GROUPS).map((k) => groupOf(touches.keys[k] as string, byKey[k] as BySums, touches, units[k] as number));
  return { groups, totals: totalsOf(total, touches) };
}

/** The labels of some groups: a page's or an audience's name; otherwise the key, and '(not set)' for none. */
export async function labelsOf(
  db: Kysely<Database>,
  tenantId: string,
  groupBy: PipelineGroupBy,
  keys: string[],
): Promise<Map<string, string>> {
  if (groupBy === 'experience' && keys.length > 0) {
    const names = await experienceNames(db, tenantId, keys);
    return new Map(keys.map((k) => [k, names.get(k) ?? k]));
  }
  if (keys.length === 0 || (groupBy !== 'page' && groupBy !== 'audience' && groupBy !== 'segment')) {
    return new Map(keys.map((k) => [k, k === '' ? '(not set)' : k]));
  }
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
