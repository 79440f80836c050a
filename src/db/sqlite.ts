import SQLite from 'better-sqlite3';
import { type CompiledQuery, SqliteDialect, type DatabaseConnection, type Dialect, type Driver, type QueryResult } from 'kysely';
import { type Checkpointer, checkpointOffLoop } from './checkpoints.js';
import type { DbObserver } from './observer.js';

/**
 * SQLite with group commit and a separate reader.
 *
 * SQLite has one writer, and the cost of a small write transaction is mostly its commit (appending
 * the changed pages to the WAL). So every transaction runs as a savepoint inside one shared outer
 * transaction, which is committed once per turn of the event loop: the writes that arrive together
 * share a commit. A transaction's commit resolves only after that outer COMMIT, so nothing is
 * acknowledged before it is durable, and a transaction that fails rolls back to its savepoint
 * without touching the others.
 *
 * Reads outside a transaction go to a second, read-only connection: WAL gives it the last
 * committed state, never a transaction that has finished but whose group has not committed yet.
 * The reads of one turn of the event loop share one read transaction on it: each read transaction
 * costs two file-lock system calls, as much as the point read itself. The snapshot ends before
 * every group commit (so what a caller reads after its commit resolved includes its write, and
 * the checkpoint at commit is never held back by it), at the end of the turn, and when a request
 * arrives after a snapshot that began before it in another way than after a request of its turn
 * (so a change made by another process is seen by every request that arrives after it was
 * committed).
 */
type Statement = SQLite.Statement<unknown[]>;

/** Statements kept by their SQL text: preparing costs more than running a short query. */
function statementCache(db: SQLite.Database, max = 1000): (sql: string) => Statement {
  const statements = new Map<string, Statement>();
  return (sql) => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      if (statements.size < max) statements.set(sql, statement);
    }
    return statement;
  };
}

/** SQLite's default for its automatic checkpoint: 1,000 pages, 4 MB. */
const WAL_FRAMES = 1000;

function run(statement: Statement, parameters: readonly unknown[]): QueryResult<unknown> {
  if (statement.reader) return { rows: statement.all(parameters) };
  const { changes, lastInsertRowid } = statement.run(parameters);
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}

/**
 * Which iteration of the event loop this is (libuv's loop count, Node ≥ 20.18). Where it is missing
 * every call counts as an iteration of its own: no snapshot is shared, which is correct but slower.
 */
const loopCount: () => number = performance.nodeTiming.uvMetricsInfo
  ? () => performance.nodeTiming.uvMetricsInfo.loopCount
  : (() => {
      let calls = 0;
      return () => ++calls;
    })();

/** A FIFO lock: whoever asked first goes first, so a flush queued behind transactions waits for exactly those. */
function fifoLock() {
  let tail = Promise.resolve();
  return async (): Promise<() => void> => {
    let release!: () => void;
    const previous = tail;
    tail = new Promise<void>((resolve) => (release = resolve));
    await previous;
    return release;
  };
}

interface Group {
  /** Transactions and statements that joined it. */
  members: number;
  committed: Promise<void>;
  resolve(): void;
  reject(err: unknown): void;
}

export interface GroupCommitSqlite {
  dialect: Dialect;
  /**
   * The version of the committed state that this turn's reads see (`PRAGMA data_version` on the
   * reader): it changes whenever any connection, of this process or another, commits. Undefined for
   * an in-memory database, which has no reader.
   */
  dataVersion: (() => number) | undefined;
  /** Called as each request arrives: its reads then see every commit made before it, in any process. */
  requestArrived: () => void;
}

export function groupCommitSqlite(file: string, observer: DbObserver = {}): GroupCommitSqlite {
  const writer = new SQLite(file);
  writer.pragma('journal_mode = WAL');
  // NORMAL in WAL mode survives a process crash (kill -9); only a power loss can drop the last commits.
  writer.pragma('synchronous = NORMAL');
  writer.pragma('foreign_keys = ON');
  // Erased and deleted values are overwritten on disk, not left readable in free pages (docs/privacy.md).
  writer.pragma('secure_delete = ON');
  // The CLI may write while a server runs on the same file: wait for the lock instead of failing.
  writer.pragma('busy_timeout = 5000');
  // The WAL is checkpointed off the event loop (checkpoints.ts), never inside a COMMIT here. Once a
  // pass finds it past SQLite's own threshold, the group after the next commit waits for a whole copy.
  let checkpointDue = false;
  const checkpointer: Checkpointer | undefined =
    file === ':memory:'
      ? undefined
      : checkpointOffLoop(file, (pass) => {
          if (pass.log >= WAL_FRAMES) checkpointDue = true;
        });
  if (checkpointer) writer.pragma('wal_autocheckpoint = 0');
  // An in-memory database cannot be shared with a second connection: its reads take the write path.
  const reader = file === ':memory:' ? undefined : new SQLite(file, { readonly: true });
  reader?.pragma('busy_timeout = 5000');
  // 32 MB of page cache for reads, not SQLite's 2 MB: random reads over a large table otherwise
  // fetch most B-tree pages from the operating system, a system call each. Writes append at the
  // end of time-ordered indexes, and the writer's default cache holds those pages.
  reader?.pragma('cache_size = -32000');

  // Timed here rather than by Kysely's `log`, whose extra promises cost more than the statements.
  const observe = observer.query;
  const exec = observe
    ? (statement: Statement, parameters: readonly unknown[], sql: string): QueryResult<unknown> => {
        const start = performance.now();
        try {
          const result = run(statement, parameters);
          observe(sql, (performance.now() - start) / 1000, false);
          return result;
        } catch (err) {
          observe(sql, (performance.now() - start) / 1000, true);
          throw err;
        }
      }
    : run;

  const write = statementCache(writer);
  const read = reader && statementCache(reader);

  let snapshot = false;
  /** `data_version` as the open snapshot sees it: it cannot change before the snapshot ends. */
  let snapshotVersion: number | undefined;
  // Turns are told apart by libuv's loop count, not by a setImmediate: an immediate can wait past
  // a whole poll (a fetch to another instance was seen to begin and end in one turn of the
  // immediates), and a turn marked by one then held a snapshot older than the request's client.
  // Every JavaScript callback of an iteration runs after that iteration's poll returned, so a
  // snapshot begun in it holds every commit the clients of the iteration's requests knew of.
  /** The loop count when the open snapshot began. */
  let snapshotLoop = -1;
  /** Whether it began after a request of that iteration arrived: then the iteration's later requests share it. */
  let snapshotAfterRequest = false;
  /** The loop count when the last request arrived. */
  let requestLoop = -1;
  const endSnapshot = () => {
    if (!snapshot) return;
    snapshot = false;
    snapshotVersion = undefined;
    if (reader?.inTransaction && read) read('commit').run();
  };
  const runRead = (statement: Statement, parameters: readonly unknown[], sql: string) => {
    const now = loopCount();
    // The end of the turn normally ends it first; this covers an immediate that waits.
    if (snapshot && snapshotLoop !== now) endSnapshot();
    if (!snapshot && read) {
      read('begin').run();
      snapshot = true;
      snapshotLoop = now;
      snapshotAfterRequest = requestLoop === now;
      setImmediate(endSnapshot);
    }
    return exec(statement, parameters, sql);
  };
  // A snapshot begun before a request arrived may predate a commit its client already knows of
  // (another instance answered it), when a timer's or a loop's read began it earlier in the same
  // iteration. So a request ends any snapshot not begun after a request of its own iteration, and
  // the requests that arrive together still share one.
  const requestArrived = () => {
    const now = loopCount();
    if (snapshot && !(snapshotAfterRequest && snapshotLoop === now)) endSnapshot();
    requestLoop = now;
  };
  const lock = fifoLock();
  let group: Group | undefined;

  const openGroup = (): Group => {
    if (group && writer.inTransaction) {
      group.members++;
      return group;
    }
    // A failed statement may have ended the outer transaction (SQLite does so on a full disk or an
    // I/O error): the members that were waiting for it fail with it, and a new group begins.
    group?.reject(new Error('The group transaction was rolled back by SQLite'));
    let resolve: () => void = () => {};
    let reject: (err: unknown) => void = () => {};
    const committed = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    committed.catch(() => {}); // observed by each member; never an unhandled rejection here
    write('begin immediate').run();
    group = { members: 1, committed, resolve, reject };
    setImmediate(() => void flush());
    return group;
  };

  async function flush(): Promise<void> {
    const release = await lock();
    const current = group;
    group = undefined;
    try {
      if (!current) return;
      if (!writer.inTransaction) throw new Error('The group transaction was rolled back by SQLite');
      endSnapshot();
      write('commit').run();
      current.resolve();
      observer.groupCommitted?.(current.members);
      if (checkpointDue && checkpointer) {
        checkpointDue = false;
        // Holding the lock, so that the next group begins on a WAL copied whole and starts it over.
        await checkpointer.now();
        // A snapshot begun while the copy ran still reads the WAL's frames, and would stop the restart.
        endSnapshot();
      }
    } catch (err) {
      if (writer.inTransaction) write('rollback').run();
      current?.reject(err);
    } finally {
      release();
    }
  }

  /** A single statement outside any transaction that may write: it joins the group like a transaction. */
  async function writeAlone(sql: string, parameters: readonly unknown[]): Promise<QueryResult<unknown>> {
    const release = await lock();
    let joined: Group;
    let result: QueryResult<unknown>;
    try {
      joined = openGroup();
      result = exec(write(sql), parameters, sql);
    } finally {
      release();
    }
    await joined.committed;
    return result;
  }

  /** The statement on the reader, if it can be prepared there (a table created moments ago may not be seen yet). */
  const readable = (sql: string): Statement | undefined => {
    try {
      return read?.(sql);
    } catch {
      return undefined;
    }
  };

  /** Rolls the current member back to its savepoint, unless SQLite already ended the whole group. */
  const undo = () => {
    if (!writer.inTransaction) return;
    write('rollback to tx').run();
    write('release tx').run();
  };
  const endTransaction = (conn: { release?: () => void }) => {
    const release = conn.release;
    conn.release = undefined;
    release?.();
  };

  const connection = (): DatabaseConnection & { release?: () => void } => {
    const self: DatabaseConnection & { release?: () => void } = {
      async executeQuery<R>({ sql, parameters }: CompiledQuery): Promise<QueryResult<R>> {
        if (self.release) return exec(write(sql), parameters, sql) as QueryResult<R>;
        const statement = readable(sql);
        if (statement?.readonly) return runRead(statement, parameters, sql) as QueryResult<R>;
        return (await writeAlone(sql, parameters)) as QueryResult<R>;
      },
      streamQuery(): AsyncIterableIterator<QueryResult<never>> {
        throw new Error('Streaming is not used by this service');
      },
    };
    return self;
  };
  type Connection = ReturnType<typeof connection>;

  // Connection objects are reused: Kysely registers every new one it is given (in a WeakSet), which
  // cost more per query than handing back an idle one. A transaction holds its object until released.
  const idle: Connection[] = [];

  const driver: Driver = {
    async init() {},
    async acquireConnection() {
      return idle.pop() ?? connection();
    },
    async beginTransaction(conn: Connection) {
      const release = await lock();
      try {
        openGroup();
        write('savepoint tx').run();
        conn.release = release;
      } catch (err) {
        release();
        throw err;
      }
    },
    async commitTransaction(conn: Connection) {
      const joined = group;
      if (!joined) throw new Error('A transaction commits only inside its group');
      try {
        write('release tx').run();
      } catch (err) {
        undo();
        throw err;
      } finally {
        endTransaction(conn);
      }
      await joined.committed;
    },
    // Kysely also calls this when the commit failed; by then the savepoint is gone and the lock free.
    async rollbackTransaction(conn: Connection) {
      if (!conn.release) return;
      const joined = group;
      try {
        undo();
      } finally {
        endTransaction(conn);
      }
      // What made this transaction fail (a conflict with another member, say) is answered only
      // once the group is committed, so no answer rests on what is not yet durable.
      await joined?.committed.catch(() => {});
    },
    async releaseConnection(conn: Connection) {
      idle.push(conn);
    },
    // Commits what is pending, then closes both connections.
    async destroy() {
      await flush();
      endSnapshot();
      reader?.close();
      await checkpointer?.stop();
      writer.close();
    },
  };

  const base = new SqliteDialect({ database: writer });
  const dialect: Dialect = {
    createAdapter: () => base.createAdapter(),
    createDriver: () => driver,
    createIntrospector: (db) => base.createIntrospector(db),
    createQueryCompiler: () => base.createQueryCompiler(),
  };
  // Read inside the turn's snapshot, so it names exactly the state the turn's other reads see; read
  // once per snapshot, as every visitor request asks for it.
  const dataVersion =
    read &&
    (() => {
      if (snapshot && snapshotLoop !== loopCount()) endSnapshot();
      snapshotVersion ??= (runRead(read('pragma data_version'), [], 'pragma data_version').rows[0] as { data_version: number })
        .data_version;
      return snapshotVersion;
    });
  return { dialect, dataVersion, requestArrived };
}
