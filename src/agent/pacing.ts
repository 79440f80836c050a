import { acceptedSoFar } from '../http/accepts.js';

/**
 * The most of this process's time background database work takes while the API is busy too: after
 * a step that took X ms, when requests were waiting, it leaves the process to them for
 * X × (1 − SHARE) / SHARE ms. When nothing else was waiting, it goes on at once. On SQLite a
 * transaction runs on the event loop from start to end, so without this a queue of ten thousand
 * versions (the agent's, or a regenerate's) would starve the API.
 */
// 0.25, not 0.5: at full scale 0.5 left get-person 0.12 of the ceiling under the agent (docs/benchmarks-history.md, session 5).
const SHARE = 0.25;
/** A turn of the event loop longer than this had other work (requests) to do. */
const BUSY_TURN_MS = 0.5;
/** The most turns in a row left to connections still being accepted (Node's listen backlog is 511). */
const ACCEPT_TURNS = 64;

/**
 * Leaves a turn of the event loop to whatever waits, and another while each turn accepts a
 * connection: libuv accepts one a turn (http/accepts.ts), so clients that connected during a step
 * are all taken in, and their requests read, before the next step holds a turn again.
 */
async function yieldTurns(): Promise<void> {
  for (let turn = 0; turn < ACCEPT_TURNS; turn++) {
    const before = acceptedSoFar();
    await new Promise((resolve) => setImmediate(resolve));
    if (acceptedSoFar() === before) return;
  }
}

/** Runs a step of database work, then leaves the process to the API for its share while it is busy (see SHARE). */
export async function paced<T>(work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await work();
  const owed = ((performance.now() - started) * (1 - SHARE)) / SHARE;
  const turn = performance.now();
  await yieldTurns();
  if (performance.now() - turn >= BUSY_TURN_MS) {
    for (let left = owed - (performance.now() - turn); left >= 1; ) {
      const slept = performance.now();
      await new Promise((resolve) => setTimeout(resolve, Math.min(left, 5)));
      left -= performance.now() - slept;
    }
  }
  return result;
}

/**
 * Runs a step of a request's own database work, then gives every request that arrived meanwhile
 * one turn before the next step (more while connections are being accepted). A request is not
 * background work: it owes no pause, or a large page's regenerate would answer after the agent had
 * worked through much of what it queued, and a tenant queueing after it would wait behind that
 * (issue 16's fairness).
 */
export async function takingTurns<T>(work: () => Promise<T>): Promise<T> {
  const result = await work();
  await yieldTurns();
  return result;
}
