import { sql } from 'kysely';
import { CACHES, countedCache } from '../db/caches.js';
import { experienceTouches } from './experience-touches.js';
import {
  type Deals,
  FIRST_INSTANT,
  iso,
  MAX_PIPELINE_DEALS,
  MAX_PIPELINE_SESSIONS,
  sizes,
  type TouchAsk,
  tooLarge,
} from './touch-reads.js';
import { MAX_WINDOW_DAYS, type PipelineGroupBy } from './pipeline-schemas.js';
import { breathe, sortSliced } from './sliced-sort.js';

/**
 * What the deals of a range could be credited from, read once for every model and window: the deals, by account, and each
 * account's touches (the sessions that started at most MAX_WINDOW_DAYS before one of its deals, through its persons' audiences
 * or their leads; with groupBy=experience, its identified experience views), each account's sorted by instant, then session id.
 * A deal's window is then a slice of its account's touches (attribution.ts), so what is read grows with deals plus sessions.
 *
 * Every statement reads a bounded chunk (keyset over deals and persons, a few hundred ids at a time) and the loop is given
 * back between them: SQLite answers synchronously, so one large statement would stall every request of the process (issue 45).
 */
const DAY_MS = 86_400_000;

export { FIRST_INSTANT, iso, MAX_PIPELINE_DEALS, MAX_PIPELINE_SESSIONS, sizes, tooLarge };
export type { Deals, TouchAsk };

export interface Touches {
  /** Account a's deals are [dealStart[a], dealStart[a + 1]), oldest first. */
  dealStart: Int32Array;
  created: Float64Array;
  cents: Float64Array;
  /** Index into `currencies`. */
  currency: Int32Array;
  won: Uint8Array;
  currencies: string[];
  /** Account a's touches are [touchStart[a], touchStart[a + 1]), by instant, then by session id. */
  touchStart: Int32Array;
  at: Float64Array;
  /** Index into `keys`, which are sorted: indexes order as the keys do. */
  key: Int32Array;
  keys: string[];
  /** What the entry keeps, for the cache's bound. */
  bytes: number;
}

/**
 * Kept per tenant, range, grouping and experiment under the three counters a touch depends on:
 * sessions (visits and leads), the tenant's change sequence (persons, accounts, audiences, pages)
 * and its deals. docs/contributing.md lists it.
 */
const kept = countedCache(CACHES.pipelineTouches, readTouches);

export function touchesOf(ask: TouchAsk): Promise<Touches> {
  const key = [ask.start, ask.end, ask.groupBy, ask.experimentId ?? ''].join(' ');
  return kept(ask.db, ask.tenantId, key, ask);
}

const GROUP_COLUMN = {
  page: 's.page_id',
  audience: 's.audience_id',
  arm: 's.experiment_arm',
  segment: 's.audience_id',
  channelGroup: 's.channel_group',
  utmSource: 's.utm_source',
  utmCampaign: 's.utm_campaign',
} as const satisfies Record<Exclude<PipelineGroupBy, 'experience'>, `s.${string}`>;

async function readDeals(ask: TouchAsk): Promise<Deals> {
  const { db, tenantId } = ask;
  const counted = await db
    .selectFrom('deals')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', tenantId)
    .where('created_at', '>=', ask.start)
    .where('created_at', '<', ask.end)
    .executeTakeFirstOrThrow();
  const n = Number(counted.n);
  const { rows: perStatement } = sizes(db);
  if (n > MAX_PIPELINE_DEALS) {
    throw tooLarge(`the range holds ${n} deals, more than the ${MAX_PIPELINE_DEALS} the report reads at once`);
  }
  const out: Deals = {
    account: [],
    created: [],
    cents: [],
    currency: [],
    won: [],
    currencies: [],
    accounts: new Map(),
    first: [],
    last: [],
  };
  const currencies = new Map<string, number>();
  let after: { created: string; id: string } | null = null;
  for (;;) {
    await breathe();
    const cursor: { created: string; id: string } | null = after;
    const rows: {
      id: string;
      created_at: string;
      amount_cents: number | string | bigint;
      currency: string;
      stage: string;
      domain_lc: string;
    }[] = await db
      .selectFrom('deals as d')
      .innerJoin('accounts as a', (j) => j.onRef('a.id', '=', 'd.account_id').onRef('a.tenant_id', '=', 'd.tenant_id'))
      .select(['d.id', 'd.created_at', 'd.amount_cents', 'd.currency', 'd.stage', 'a.domain_lc'])
      .where('d.tenant_id', '=', tenantId)
      .where('d.created_at', '>=', ask.start)
      .where('d.created_at', '<', ask.end)
      // A row comparison, so that the list index starts at the cursor (an OR of two would scan from the range's start).
      .$call((q) => (cursor === null ? q : q.where(sql<boolean>`(d.created_at, d.id) > (${cursor.created}, ${cursor.id})`)))
      .orderBy('d.created_at')
      .orderBy('d.id')
      .limit(perStatement)
      .execute();
    for (const r of rows) {
      let a = out.accounts.get(r.domain_lc);
      const created = Date.parse(r.created_at);
      if (a === undefined) {
        a = out.first.push(created) - 1;
        out.last.push(created);
        out.accounts.set(r.domain_lc, a);
      }
      out.last[a] = created;
      let c = currencies.get(r.currency);
      if (c === undefined) {
        c = out.currencies.push(r.currency) - 1;
        currencies.set(r.currency, c);
      }
      out.account.push(a);
      out.created.push(created);
      out.cents.push(Number(r.amount_cents));
      out.currency.push(c);
      out.won.push(r.stage === 'won' ? 1 : 0);
    }
    const tail = rows[rows.length - 1];
    if (!tail || rows.length < perStatement) return out;
    after = { created: tail.created_at, id: tail.id };
  }
}

/** The persons of the deals' accounts: person id → account index. */
async function readPersons(ask: TouchAsk, accounts: Map<string, number>): Promise<Map<string, number>> {
  const persons = new Map<string, number>();
  const domains = [...accounts.keys()];
  const { rows: perStatement, ids: idsPer } = sizes(ask.db);
  for (let i = 0; i < domains.length; i += idsPer) {
    const batch = domains.slice(i, i + idsPer);
    let after = '';
    for (;;) {
      await breathe();
      const rows = await ask.db
        .selectFrom('persons')
        .select(['id', 'domain_lc'])
        .where('tenant_id', '=', ask.tenantId)
        .where('domain_lc', 'in', batch)
        .where('id', '>', after)
        .orderBy('id')
        .limit(perStatement)
        .execute();
      for (const r of rows) persons.set(r.id, accounts.get(r.domain_lc ?? '') as number);
      if (persons.size > MAX_PIPELINE_SESSIONS) {
        throw tooLarge(`the deals' accounts have more than the ${MAX_PIPELINE_SESSIONS} persons the report reads at once`);
      }
      const tail = rows.at(-1);
      if (!tail || rows.length < perStatement) break;
      after = tail.id;
    }
  }
  return persons;
}

interface SessionRow {
  id: string;
  started: string;
  key: string | null;
  person: string;
}

/**
 * The sessions of some persons, through their audiences or the leads they sent, that started in
 * [from, to]. The joins are written as CROSS JOINs with their conditions in WHERE: SQLite keeps
 * that order (persons' audiences or leads by index, then sessions by audience and start, or by id).
 */
function sessionsOf(ask: TouchAsk, path: 'audience' | 'lead', persons: string[], from: string, to: string, limit: number) {
  const column = sql<string | null>`${sql.ref(GROUP_COLUMN[ask.groupBy as keyof typeof GROUP_COLUMN])}`.as('key');
  const base =
    path === 'audience'
      ? ask.db
          .selectFrom('audiences as via')
          .crossJoin('audience_sessions as s')
          .where('via.tenant_id', '=', ask.tenantId)
          .where('via.person_id', 'in', persons)
          .whereRef('s.audience_id', '=', 'via.id')
          .select(['s.id', 's.session_started_at as started', column, sql<string>`via.person_id`.as('person')])
      : ask.db
          .selectFrom('leads as via')
          .crossJoin('audience_sessions as s')
          .where('via.tenant_id', '=', ask.tenantId)
          .where('via.person_id', 'in', persons)
          .whereRef('s.id', '=', 'via.session_id')
          .select(['s.id', 's.session_started_at as started', column, sql<string>`via.person_id`.as('person')]);
  return base
    .where('s.session_started_at', '>=', from)
    .where('s.session_started_at', '<=', to)
    .$call((q) => (ask.experimentId === null ? q : q.where('s.experiment_id', '=', ask.experimentId)))
    .$call((q) =>
      // A segment is an audience of rules: a visit matched to one (never a person's own audience).
      ask.groupBy === 'segment'
        ? q.where(({ exists, selectFrom }) =>
            exists(
              selectFrom('audiences as seg').select('seg.id').whereRef('seg.id', '=', 's.audience_id').where('seg.rules', 'is not', null),
            ),
          )
        : q,
    )
    .limit(limit)
    .execute() as Promise<SessionRow[]>;
}

async function readTouches(ask: TouchAsk): Promise<Touches> {
  const deals = await readDeals(ask);
  const persons = await readPersons(ask, deals.accounts);
  // A person's own audience has no rules: by segment, only sessions a lead was sent in can touch.
  // Leads first: an audience's sessions reach one account each, so only the sessions leads
  // reached need remembering, for the audiences' path to leave out (one session is one touch). An
  // experience's touches are its identified views (experience-touches.ts), never sessions.
  const paths = ask.groupBy === 'experience' ? [] : ask.groupBy === 'segment' ? (['lead'] as const) : (['lead', 'audience'] as const);
  const windowMs = MAX_WINDOW_DAYS * DAY_MS;
  const ids = [...persons.keys()];
  const { ids: idsPer } = sizes(ask.db);
  const viaLeads = new Set<string>();
  const keyIndex = new Map<string, number>();
  const keys: string[] = [];
  const account: number[] = [];
  const at: number[] = [];
  const key: number[] = [];
  const session: string[] = [];
  const touch = (a: number, started: number, value: string, id: string) => {
    const k = keyIndex.get(value) ?? (keyIndex.set(value, keys.push(value) - 1).get(value) as number);
    account.push(a);
    at.push(started);
    key.push(k);
    session.push(id);
  };
  let read = 0;
  for (const path of paths) {
    for (let i = 0; i < ids.length; i += idsPer) {
      const chunk = ids.slice(i, i + idsPer);
      let from = Number.POSITIVE_INFINITY;
      let to = Number.NEGATIVE_INFINITY;
      for (const p of chunk) {
        const a = persons.get(p) as number;
        from = Math.min(from, (deals.first[a] as number) - windowMs);
        to = Math.max(to, deals.last[a] as number);
      }
      await breathe();
      const rows = await sessionsOf(ask, path, chunk, iso(from), iso(to), MAX_PIPELINE_SESSIONS - read + 1);
      read += rows.length;
      if (read > MAX_PIPELINE_SESSIONS) {
        throw tooLarge(`the deals' accounts have more than the ${MAX_PIPELINE_SESSIONS} sessions the report reads at once`);
      }
      for (const r of rows) {
        if (r.key === null) continue;
        const a = persons.get(r.person) as number;
        const started = Date.parse(r.started);
        // Read for the chunk's widest span: only this account's deals' windows count.
        if (started < (deals.first[a] as number) - windowMs || started > (deals.last[a] as number)) continue;
        const once = `${a} ${r.id}`;
        if (path === 'lead') {
          if (viaLeads.has(once)) continue;
          viaLeads.add(once);
        } else if (viaLeads.has(once)) continue;
        touch(a, started, r.key, r.id);
      }
    }
  }
  if (ask.groupBy === 'experience') await experienceTouches(ask, deals, windowMs, touch);
  return arrange(deals, keys, { account, at, key, session });
}

/** Each account's deals and touches together, its touches by instant, then by session id. */
async function arrange(
  deals: Deals,
  keys: string[],
  { account, at, key, session }: { account: number[]; at: number[]; key: number[]; session: string[] },
): Promise<Touches> {
  const accounts = deals.first.length;
  // Keys sorted, so that comparing indexes compares keys (ties go to the smallest key).
  const order = await sortSliced(
    Int32Array.from(keys, (_, i) => i),
    (x, y) => {
      const a = keys[x] as string;
      const b = keys[y] as string;
      return a < b ? -1 : a > b ? 1 : 0;
    },
  );
  const rank = new Int32Array(keys.length);
  const sortedKeys: string[] = [];
  for (const [r, k] of order.entries()) {
    rank[k] = r;
    sortedKeys.push(keys[k] as string);
  }
  // Deals come oldest first: a stable placement by account keeps each account's oldest first.
  const dealStart = startsOf(accounts, deals.account);
  const n = deals.account.length;
  const created = new Float64Array(n);
  const cents = new Float64Array(n);
  const currency = new Int32Array(n);
  const won = new Uint8Array(n);
  const next = dealStart.slice(0, accounts);
  for (let i = 0; i < n; i++) {
    const a = deals.account[i] as number;
    const j = next[a] as number;
    next[a] = j + 1;
    created[j] = deals.created[i] as number;
    cents[j] = deals.cents[i] as number;
    currency[j] = deals.currency[i] as number;
    won[j] = deals.won[i] as number;
  }
  const m = account.length;
  const placed = await sortSliced(
    Int32Array.from(account, (_, i) => i),
    // A session is one touch of an account: ties in time are ordered by session id (issue 49).
    (x, y) =>
      (account[x] as number) - (account[y] as number) ||
      (at[x] as number) - (at[y] as number) ||
      ((session[x] as string) < (session[y] as string) ? -1 : 1),
  );
  const touchAt = new Float64Array(m);
  const touchKey = new Int32Array(m);
  for (let j = 0; j < m; j++) {
    const i = placed[j] as number;
    touchAt[j] = at[i] as number;
    touchKey[j] = rank[key[i] as number] as number;
  }
  const text = sortedKeys.reduce((sum, s) => sum + 2 * s.length + 40, 0);
  return {
    dealStart,
    created,
    cents,
    currency,
    won,
    currencies: deals.currencies,
    touchStart: startsOf(accounts, account),
    at: touchAt,
    key: touchKey,
    keys: sortedKeys,
    bytes: 1024 + n * 32 + m * 12 + text,
  };
}

/** Where each account's run starts in a placement by account: `accounts + 1` offsets. */
function startsOf(accounts: number, of: number[]): Int32Array {
  const starts = new Int32Array(accounts + 1);
  for (const a of of) starts[a + 1] = (starts[a + 1] as number) + 1;
  for (let a = 0; a < accounts; a++) starts[a + 1] = (starts[a + 1] as number) + (starts[a] as number);
  return starts;
}
