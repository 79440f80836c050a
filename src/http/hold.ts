import type { IncomingMessage, Server, ServerResponse } from 'node:http';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Keeps the server's requests waiting (their bodies unread) until `release()` is called, then
 * hands each to the listeners the server had. Lets start-up take the port first and do its
 * database work after (server.ts), without a request meeting that work half done.
 */
export function holdRequests(server: Server): () => void {
  const listeners = server.listeners('request') as Listener[];
  const held: [IncomingMessage, ServerResponse][] = [];
  const hold: Listener = (req, res) => {
    held.push([req, res]);
  };
  for (const listener of listeners) server.removeListener('request', listener);
  server.on('request', hold);
  return () => {
    server.removeListener('request', hold);
    for (const listener of listeners) server.on('request', listener);
    for (const [req, res] of held.splice(0)) for (const listener of listeners) listener(req, res);
  };
}
