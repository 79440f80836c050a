import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { DbObserver } from './observer.js';

/**
 * The tenants' change sequences as PostgreSQL announces them (LISTEN/NOTIFY): the trigger that
 * moves a tenant's sequence (migration 2026_11_27_0024_tenant_changes) also notifies `pam_site`
 * with the tenant's id, delivered at commit to every instance's listening connection.
 *
 * A notification alone is never trusted to have arrived in time: before a kept answer is used,
 * `sync` sends a notification of its own on this instance's private channel and waits for it to
 * come back. PostgreSQL delivers notifications in commit order, so when it is back, every change
 * committed before `sync` was called has been received. The round trip is shared: every request
 * that arrives while one is out waits for the next one, which starts when the first is back. Under
 * load (SYNC_BATCH requests within SYNC_GAP_MS that found another's sync out or waiting) the next
 * also waits until SYNC_BATCH requests wait or SYNC_GAP_MS passed since the previous was sent, so
 * one statement covers many requests (a request waits SYNC_GAP_MS more at most); below that it is
 * sent at once, so a client sending requests one after another waits one round trip, not the gap.
 * While the connection is down (killed, server restarted) `sync` answers false at once and the
 * callers read instead; after a reconnect, the epoch moves, and everything remembered before it is
 * dropped (changes made meanwhile were missed).
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

export const SITE_CHANNEL = 'pam_site';

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

interface Waiter {
  resolve(ok: boolean): void;
}

export function changeFeed(url: string, observer: DbObserver = {}): ChangeFeed {
  const channel = `pam_sync_${randomBytes(8).toString('hex')}`;
  let client: pg.Client | undefined;
  let healthy = false;
  let closed = false;
  let epoch = 0;
  let received = 0;
  const lastChange = new Map<string, number>();
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

  const send = (waiters: Waiter[]) => {
    const n = ++sent;
    sentAt = performance.now();
    out = { n, waiters, timer: setTimeout(() => down(), SYNC_TIMEOUT_MS) };
    const start = performance.now();
    client?.query('select pg_notify($1, $2)', [channel, String(n)]).then(
      () => observer.query?.('select pg_notify', (performance.now() - start) / 1000, false),
      () => down(),
    );
  };

  const down = () => {
    if (!healthy && !client) return;
    healthy = false;
    const old = client;
    client = undefined;
    old?.removeAllListeners('notification');
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
    c.on('notification', (msg) => {
      if (msg.channel === SITE_CHANNEL && msg.payload) {
        if (lastChange.size >= MAX_TENANTS) {
          lastChange.clear();
          epoch++;
        }
        lastChange.set(msg.payload, ++received);
      } else if (msg.channel === channel && out && msg.payload === String(out.n)) settle(true);
    });
    try {
      client = c;
      await c.connect();
      await c.query(`listen ${SITE_CHANNEL}`);
      await c.query(`listen ${channel}`);
      // Whatever was remembered before this connection listened may have missed a change.
      epoch++;
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
