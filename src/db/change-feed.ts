import pg from 'pg';
import type { DbObserver } from './observer.js';

/**
 * The tenants' change sequences as PostgreSQL records them: the trigger that moves a tenant's
 * sequence (migrations 0024, 0063 and 0071), and `noteSiteChange`, record in the moved row the
 * writing transaction's id (`writer`). Nothing is notified: a transaction that calls NOTIFY commits
 * under a lock of the whole cluster, one at a time (issue 50).
 *
 * A kept answer is used only once `sync` is back. A sync is one statement: the rows written at or
 * after the previous sync's `xmin` (the oldest transaction its snapshot saw still running), and this
 * snapshot's own `xmin`. A transaction below that `xmin` had ended when the previous snapshot was
 * taken, so its rows were read then (or, by the same argument, by an earlier sync); one still
 * running then, or begun since, has an id at or above it. So when a sync is back, every change
 * committed before it was called has been received, whatever the order of ids and commits. A row
 * read again with the same value is no new change. The round trip is shared: every request that
 * arrives while one is out waits for the next one, which starts when the first is back. Under load
 * (SYNC_BATCH requests within SYNC_GAP_MS that found another's sync out or waiting) the next also
 * waits until SYNC_BATCH requests wait or SYNC_GAP_MS passed since the previous was sent, so one
 * statement covers many requests (a request waits SYNC_GAP_MS more at most); below that it is sent
 * at once, so a client sending requests one after another waits one round trip, not the gap.
 * While the connection is down (killed, server restarted) `sync` answers false at once and the
 * callers read instead; after a reconnect, the epoch moves, and everything remembered before it is
 * dropped.
 */
export interface ChangeFeed {
  /** True once every change committed before the call has been received; false when the feed cannot tell. */
  sync(): Promise<boolean>;
  /** A mark to take before reading what will be remembered: see `changedSince`. */
  mark(): { epoch: number; at: number };
  /** Whether the tenant changed (or the feed reconnected) since `mark`: then what was read under it is old. */
  changedSince(tenantId: string, mark: { epoch: number; at: number }): boolean;
  close(): Promise<void>;
}

/** A sync not back within this long means the connection is unwell: the callers read instead. */
const SYNC_TIMEOUT_MS = 1000;
/**
 * Under load, a sync waits for this many requests or this long since the previous one, whichever
 * comes first (issue 31: authentication costs no statement on most requests). Back to back, a sync
 * covered about five requests at 4,000 a second; a fixed gap alone covered few at a loaded
 * machine's 900 a second. Load is this many requests within the gap that found another's sync out
 * or waiting: below that the wait would save little, and a client asking one request after another
 * (whose requests never meet, however fast) would pay the gap on every one, so a sync is sent as
 * soon as none is out.
 */
const SYNC_BATCH = 12;
const SYNC_GAP_MS = 16;
const RECONNECT_MS = 1000;
/** Tenants whose last change is remembered; past this, all are forgotten (the epoch moves). */
const MAX_TENANTS = 100_000;
/**
 * Rows a sync reads at most. A transaction that wrote and stays open (a session left idle in one)
 * holds every snapshot's `xmin` back, so every sync reads every row written since: past this many,
 * everything remembered is forgotten (the epoch moves) and the callers read until it ends.
 */
const MAX_ROWS = 1000;

/** The sync (see above): `$1`, the previous sync's `xmin`; null reads no row, only this `xmin`. */
const SYNC = `
  select s.xmin, c.scope, c.value::text as value
  from (select pg_snapshot_xmin(pg_current_snapshot())::text as xmin) s
  left join (select scope, value from change_counters where writer >= $1::xid8 limit ${MAX_ROWS + 1}) c on true`;
interface SyncRow {
  xmin: string;
  scope: string | null;
  value: string | null;
}
/** `site:<tenant>` or one of its shards, `site:<tenant>#1` … `#7` (migration 0063). */
const tenantOf = (scope: string) => scope.slice('site:'.length).replace(/#[1-7]$/, '');

interface Waiter {
  resolve(ok: boolean): void;
}

export function changeFeed(url: string, observer: DbObserver = {}): ChangeFeed {
  let client: pg.Client | undefined;
  let healthy = false;
  let closed = false;
  let epoch = 0;
  let received = 0;
  const lastChange = new Map<string, number>();
  // Each row's value as last read: read again unchanged, it is no new change.
  const seen = new Map<string, string>();
  let since: string | undefined;
  let sent = 0;
  let sentAt = Number.NEGATIVE_INFINITY;
  let out: { n: number; waiters: Waiter[]; timer: NodeJS.Timeout } | undefined;
  let next: Waiter[] = [];
  let scheduled: NodeJS.Timeout | undefined;
  // When the last SYNC_BATCH syncs that met another's were asked, the oldest at `met[oldest]`:
  // load is all of them within the gap.
  const met = new Array<number>(SYNC_BATCH).fill(Number.NEGATIVE_INFINITY);
  let oldest = 0;

  const settle = (ok: boolean) => {
    const done = out;
    out = undefined;
    if (done) {
      clearTimeout(done.timer);
      for (const w of done.waiters) w.resolve(ok);
    }
    if (!ok || !healthy) {
      clearTimeout(scheduled);
      scheduled = undefined;
      const waiting = next;
      next = [];
      for (const w of waiting) w.resolve(false);
      return;
    }
    schedule();
  };

  /** Sends the next sync for the requests waiting, once none is out and enough wait or the gap has passed. */
  const schedule = () => {
    if (out || next.length === 0) return;
    const at = performance.now();
    const wait = sentAt + SYNC_GAP_MS - at;
    const loaded = at - (met[oldest] as number) < SYNC_GAP_MS;
    if (!loaded || wait <= 0 || next.length >= SYNC_BATCH) {
      clearTimeout(scheduled);
      scheduled = undefined;
      const waiting = next;
      next = [];
      send(waiting);
      return;
    }
    if (scheduled) return;
    scheduled = setTimeout(() => {
      scheduled = undefined;
      schedule();
    }, Math.ceil(wait));
  };

  const forget = () => {
    lastChange.clear();
    seen.clear();
    epoch++;
  };

  const receive = (rows: SyncRow[]) => {
    if (rows.length > MAX_ROWS) forget();
    else
      for (const { scope, value } of rows) {
        if (scope === null || value === null || !scope.startsWith('site:') || seen.get(scope) === value) continue;
        if (lastChange.size >= MAX_TENANTS || seen.size >= 8 * MAX_TENANTS) forget();
        seen.set(scope, value);
        lastChange.set(tenantOf(scope), ++received);
      }
    since = rows[0]?.xmin;
  };

  const send = (waiters: Waiter[]) => {
    if (!client || since === undefined) {
      for (const w of waiters) w.resolve(false);
      return;
    }
    const n = ++sent;
    sentAt = performance.now();
    out = { n, waiters, timer: setTimeout(() => down(), SYNC_TIMEOUT_MS) };
    const start = performance.now();
    client.query<SyncRow>(SYNC, [since]).then(
      (result) => {
        observer.query?.(SYNC, (performance.now() - start) / 1000, false);
        // Gone meanwhile (timed out, reconnected): the next connection starts afresh.
        if (out?.n !== n) return;
        receive(result.rows);
        settle(true);
      },
      () => down(),
    );
  };

  const down = () => {
    if (!healthy && !client) return;
    healthy = false;
    const old = client;
    client = undefined;
    since = undefined;
    void old?.end().catch(() => {});
    settle(false);
    if (!closed) setTimeout(connect, RECONNECT_MS).unref();
  };

  const connect = async () => {
    if (closed) return;
    const c = new pg.Client({ connectionString: url, keepAlive: true, application_name: 'pam-change-feed' });
    c.on('error', () => down());
    c.on('end', () => {
      if (client === c) down();
    });
    try {
      client = c;
      await c.connect();
      const { rows } = await c.query<SyncRow>(SYNC, [null]);
      if (client !== c) return;
      // Whatever was remembered before this connection's first snapshot may have missed a change.
      forget();
      since = rows[0]?.xmin;
      healthy = true;
    } catch {
      if (client === c) down();
      else void c.end().catch(() => {});
    }
  };
  void connect();

  return {
    sync() {
      if (!healthy) return Promise.resolve(false);
      return new Promise<boolean>((resolve) => {
        // One already out was sent before this call: it proves nothing about changes made since.
        if (out || next.length > 0) {
          met[oldest] = performance.now();
          oldest = (oldest + 1) % SYNC_BATCH;
        }
        next.push({ resolve });
        schedule();
      });
    },
    mark: () => ({ epoch, at: received }),
    changedSince: (tenantId, mark) => mark.epoch !== epoch || (lastChange.get(tenantId) ?? 0) > mark.at,
    async close() {
      closed = true;
      healthy = false;
      settle(false);
      clearTimeout(scheduled);
      const c = client;
      client = undefined;
      await c?.end().catch(() => {});
    },
  };
}
