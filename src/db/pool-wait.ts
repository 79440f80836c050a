import type pg from 'pg';

/**
 * How long a request waits for a PostgreSQL connection. A burst that finds every connection busy is
 * not an outage: it waits its turn (the pool's own timeout, up to 10 s). Once the database has
 * failed to answer (a connection that could not open, or one that died under a query), it is
 * treated as down: every request already waiting is refused at once, and each new one waits at most
 * `downWaitMs`, so a client hears 503 within seconds instead of queueing behind connections that
 * will each time out in turn. The first connection that works ends it.
 */
export interface PoolWait {
  acquire(): Promise<pg.PoolClient>;
  /** A connection could not be opened, or one failed under a query for its own sake (reset, terminated, timed out). */
  failed(err: Error): void;
  /** A query was answered: the database is there. */
  answered(): void;
}

export function poolWait(connect: () => Promise<pg.PoolClient>, downWaitMs: number): PoolWait {
  let down = false;
  const waiting = new Set<(err: Error) => void>();
  const failed = (err: Error) => {
    down = true;
    for (const refuse of [...waiting]) refuse(err);
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
        // connections that could not open (`failed`), so this waiter alone is refused.
        (err: unknown) => refuse(err instanceof Error ? err : new Error(String(err))),
      );
    });
  const answered = () => {
    down = false;
  };
  return { acquire, failed, answered };
}
