import type pg from 'pg';

/**
 * How long a request waits for a PostgreSQL connection. A burst that finds every connection busy is
 * not an outage: it waits its turn (the pool's own timeout, up to 10 s). Once the database is known
 * to be down, every request already waiting is refused at once, and each new one waits at most
 * `downWaitMs`, so a client hears 503 within seconds instead of queueing behind connections that
 * will each time out in turn. The first connection that works ends it.
 *
 * What counts as down: a connection that could not be opened (except "too many connections": the
 * server is there, only full), or a query that failed for its connection's sake (reset, terminated,
 * timed out) when a fresh connection of the probe's own cannot answer either. A query can time out
 * on a loaded machine or behind a lock; that alone must not refuse every other waiting request.
 */
export interface PoolWait {
  acquire(): Promise<pg.PoolClient>;
  /** A connection could not be opened. */
  connectFailed(err: Error): void;
  /** A query failed for its connection's sake: the database is probed before it is called down. */
  queryFailed(err: Error): void;
  /** A query was answered: the database is there. */
  answered(): void;
}

/** PostgreSQL's too_many_connections: the server answered, so it is up. */
const SERVER_FULL = '53300';

export function poolWait(connect: () => Promise<pg.PoolClient>, downWaitMs: number, probe: () => Promise<void>): PoolWait {
  let down = false;
  let probing: Promise<void> | undefined;
  const waiting = new Set<(err: Error) => void>();
  const markDown = (err: Error) => {
    down = true;
    for (const refuse of [...waiting]) refuse(err);
  };
  const connectFailed = (err: Error) => {
    if ((err as { code?: unknown }).code !== SERVER_FULL) markDown(err);
  };
  const queryFailed = (err: Error) => {
    if (down || probing) return;
    probing = probe().then(
      () => {
        probing = undefined;
      },
      (probeErr: unknown) => {
        probing = undefined;
        connectFailed(probeErr instanceof Error ? probeErr : err);
      },
    );
  };
  const acquire = () =>
    new Promise<pg.PoolClient>((resolve, reject) => {
      let settled = false;
      const pending = connect();
      const refuse = (err: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        waiting.delete(refuse);
        reject(err);
        // The pool still owes this waiter a connection: handed back as soon as it comes.
        pending.then(
          (client) => client.release(),
          () => {},
        );
      };
      const timer = down
        ? setTimeout(() => refuse(new Error(`no connection to the database within ${downWaitMs} ms (it was unreachable)`)), downWaitMs)
        : undefined;
      waiting.add(refuse);
      pending.then(
        (client) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          waiting.delete(refuse);
          down = false;
          resolve(client);
        },
        // The pool's own wait running out is a busy pool, not an outage: the client class reports
        // connections that could not open (`connectFailed`), so this waiter alone is refused.
        (err: unknown) => refuse(err instanceof Error ? err : new Error(String(err))),
      );
    });
  const answered = () => {
    down = false;
  };
  return { acquire, connectFailed, queryFailed, answered };
}
