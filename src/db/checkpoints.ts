import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * SQLite's WAL is checkpointed on a thread of its own, not inside a COMMIT on the event loop.
 *
 * By default the connection that commits checkpoints once the WAL passes 1,000 pages, inside that
 * COMMIT: it copies the WAL's pages into the database file and syncs both, holding the event loop.
 * Under concurrent writes to a 456 MB file that held it 40–65 ms at a time, with no request
 * answered (docs/benchmarks-history.md, sessions 46 to 48). Here one worker thread per process
 * copies the pages instead (PASSIVE: it never waits for, nor blocks, a reader or the writer).
 *
 * SQLite starts the WAL over only when a write transaction begins after every frame was copied.
 * The group committer begins its next transaction in the turn after a commit, so a copy on another
 * thread would almost never finish first, and the WAL would grow without bound (a probe grew it to
 * 164 MB in 40,000 updates). So once a pass finds the WAL over its size, the writer holds its next
 * group back until the worker's copy is whole (sqlite.ts): reads go on meanwhile, writes wait.
 */
const PASS_MS = 100;

// The worker is a script of its own (eval), so it needs no build step and no loader: the service
// runs from dist/ and the tests through tsx alike. It gets better-sqlite3's resolved path.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.sqlite);
const open = new Map();
const checkpoint = (file, db) => {
  try {
    const [{ log, checkpointed }] = db.pragma('wal_checkpoint(PASSIVE)');
    return { file, log, checkpointed };
  } catch {
    return { file, log: -1, checkpointed: -1 };
  }
};
setInterval(() => {
  for (const [file, { db }] of open) parentPort.postMessage({ pass: checkpoint(file, db) });
}, workerData.everyMs);
parentPort.on('message', ({ op, file, id }) => {
  let pass;
  try {
    const kept = open.get(file);
    if (op === 'add' && kept) kept.users++;
    else if (op === 'add') {
      const db = new SQLite(file);
      db.pragma('busy_timeout = 0');
      open.set(file, { db, users: 1 });
    } else if (op === 'drop' && kept && --kept.users === 0) {
      kept.db.close();
      open.delete(file);
    } else if (op === 'now' && kept) pass = checkpoint(file, kept.db);
  } catch { /* a file that cannot be opened is not checkpointed here: the writer's close still does */ }
  parentPort.postMessage({ id, pass });
});
`;

/** One checkpoint: the WAL's frames, and how many of them are in the database file now (-1 if busy). */
export interface Pass {
  file: string;
  log: number;
  checkpointed: number;
}

export interface Checkpointer {
  /** Copies what it can now, off the event loop. */
  now(): Promise<Pass | undefined>;
  /** Stops, once the worker closed its connection: the writer's own close is then the last. */
  stop(): Promise<void>;
}

type Reply = { id: number; pass?: Pass } | { pass: Pass };

const listeners = new Map<string, Set<(pass: Pass) => void>>();
const waiting = new Map<number, (pass: Pass | undefined) => void>();
let worker: Worker | undefined;
let users = 0;
let nextId = 0;

function ask(op: 'add' | 'drop' | 'now', file: string): Promise<Pass | undefined> {
  const w = worker;
  if (!w) return Promise.resolve(undefined);
  const id = nextId++;
  // An answer awaited keeps the process alive until it arrives; an idle worker does not.
  w.ref();
  return new Promise((resolve) => {
    waiting.set(id, (pass) => {
      if (waiting.size === 0) w.unref();
      resolve(pass);
    });
    w.postMessage({ op, file, id });
  });
}

function start(): Worker {
  const sqlite = createRequire(import.meta.url).resolve('better-sqlite3');
  const started = new Worker(WORKER, { eval: true, workerData: { sqlite, everyMs: PASS_MS } });
  started.on('message', (reply: Reply) => {
    if (!('id' in reply)) {
      for (const listener of listeners.get(reply.pass.file) ?? []) listener(reply.pass);
      return;
    }
    const resolve = waiting.get(reply.id);
    waiting.delete(reply.id);
    resolve?.(reply.pass);
  });
  // If the worker fails, nothing waits for it and the writer's close still checkpoints.
  started.on('error', () => {});
  started.on('exit', () => {
    if (worker === started) worker = undefined;
    const left = [...waiting.values()];
    waiting.clear();
    for (const resolve of left) resolve(undefined);
  });
  // The worker holds no process open.
  started.unref();
  return started;
}

/** Checkpoints `file` every PASS_MS off the event loop, telling `onPass` each result. */
export function checkpointOffLoop(file: string, onPass: (pass: Pass) => void): Checkpointer {
  worker ??= start();
  users++;
  const mine = listeners.get(file) ?? new Set();
  mine.add(onPass);
  listeners.set(file, mine);
  void ask('add', file);
  let stopped = false;
  return {
    now: () => ask('now', file),
    async stop() {
      if (stopped) return;
      stopped = true;
      mine.delete(onPass);
      if (mine.size === 0) listeners.delete(file);
      await ask('drop', file);
      if (--users === 0 && worker) {
        const done = worker;
        worker = undefined;
        await done.terminate();
      }
    },
  };
}
