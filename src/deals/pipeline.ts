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
import { type Touches, touchesOf } from './touches.js';

/**
 * The influenced pipeline (docs/analytics.md, "Influenced pipeline"). A deal is touched by a
 * session when the session's person belongs to the deal's account (the person of the session's
 * audience, or of a lead sent in that session; a person belongs to the account of its domain) and
 * the session started in [createdAt − windowDays, createdAt]. The touches of a range are read once
 * for every window (touches.ts); a model and a window are a pass over them here, which keeps each
 * (deal, group)'s first and last touch and makes the sums per currency.
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

/** A deal's first and last touch in one group. */
interface Span {
  key: number;
  first: number;
  last: number;
}

/** The deals credited to each group: every touched group (`any`), or the group of the earliest or latest touch. */
function credit(model: PipelineModel, touches: Touches, windowDays: number): Map<number, number[]> {
  const windowMs = windowDays * DAY_MS;
  const byDeal = new Map<number, Map<number, Span>>();
  for (let j = 0; j < touches.at.length; j++) {
    const d = touches.deal[j] as number;
    const k = touches.key[j] as number;
    const at = touches.at[j] as number;
    // Exactly windowDays before createdAt is in; one millisecond earlier is not.
    if ((touches.deals[d]?.created ?? 0) - at > windowMs) continue;
    const spans = byDeal.get(d) ?? new Map<number, Span>();
    byDeal.set(d, spans);
    const seen = spans.get(k);
    // The two paths may reach one session: keep the widest span per group.
    if (!seen) spans.set(k, { key: k, first: at, last: at });
    else {
      if (at < seen.first) seen.first = at;
      if (at > seen.last) seen.last = at;
    }
  }
  const groups = new Map<number, number[]>();
  const give = (key: number, deal: number) => {
    const list = groups.get(key);
    if (list) list.push(deal);
    else groups.set(key, [deal]);
  };
  const keyOf = (span: Span) => touches.keys[span.key] as string;
  for (const [deal, spans] of byDeal) {
    if (model === 'any') {
      for (const span of spans.values()) give(span.key, deal);
      continue;
    }
    // Ties go to the smallest key, so the answer does not depend on the statements' order.
    let chosen: Span | undefined;
    for (const span of spans.values()) {
      const better =
        chosen === undefined ||
        (model === 'first' ? span.first < chosen.first : span.last > chosen.last) ||
        ((model === 'first' ? span.first === chosen.first : span.last === chosen.last) && keyOf(span) < keyOf(chosen));
      if (better) chosen = span;
    }
    if (chosen) give(chosen.key, deal);
  }
  return groups;
}

function sums(dealIndexes: Iterable<number>, touches: Touches): PipelineTotals {
  const byCurrency = new Map<string, { deals: number; cents: number; wonDeals: number; wonCents: number }>();
  let count = 0;
  let won = 0;
  for (const i of dealIndexes) {
    const d = touches.deals[i];
    if (!d?.known) continue;
    const c = byCurrency.get(d.currency) ?? { deals: 0, cents: 0, wonDeals: 0, wonCents: 0 };
    byCurrency.set(d.currency, c);
    c.deals += 1;
    c.cents += d.cents;
    count += 1;
    if (d.won) {
      c.wonDeals += 1;
      c.wonCents += d.cents;
      won += 1;
    }
  }
  const list: CurrencySums[] = [...byCurrency.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([currency, c]) => ({ currency, deals: c.deals, amount: c.cents / 100, wonDeals: c.wonDeals, wonAmount: c.wonCents / 100 }));
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
  const credited = credit(ask.model, touches, ask.windowDays);
  const touched = new Set<number>();
  for (const deals of credited.values()) for (const d of deals) touched.add(d);
  const groups: PipelineGroup[] = [...credited.entries()]
    .map(([k, deals]) => ({ key: touches.keys[k] as string, label: touches.labels[k] as string, ...sums(deals, touches) }))
    .sort((a, b) => b.deals - a.deals || b.wonDeals - a.wonDeals || (a.key < b.key ? -1 : 1))
    // As every grouped answer of analytics: the top groups; the totals count every deal.
    .slice(0, MAX_GROUPS);
  const totals = sums(touched, touches);
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
