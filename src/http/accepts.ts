/**
 * Connections this process's HTTP servers have accepted. libuv accepts one connection a turn of
 * the event loop (libuv#3696, in Node 20), so while a step of background work holds each turn,
 * fifty clients connecting at once wait up to fifty steps to be accepted, their requests unread in
 * the backlog: the agent scenario's stalls of 0.3 to 1.7 s (docs/benchmarks-history.md, session
 * 54). Work that takes turns (agent/pacing.ts) yields again while turns keep accepting.
 */
let accepted = 0;

/** Counts the server's accepted connections (server-options.ts calls it on the one server). */
export function countAccepts(server: { on(event: 'connection', listener: () => void): unknown }): void {
  server.on('connection', () => {
    accepted++;
  });
}

/** How many connections have been accepted so far; compare two readings to tell whether a turn accepted one. */
export const acceptedSoFar = (): number => accepted;
