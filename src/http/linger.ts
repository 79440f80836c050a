import type { IncomingMessage, ServerResponse } from 'node:http';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** How much of a refused body is read and thrown away, and for how long, before the socket goes. */
export interface LingerBounds {
  bytes: number;
  ms: number;
}

export const LINGER_BOUNDS: LingerBounds = { bytes: 64 * 1024 * 1024, ms: 10_000 };

/**
 * What nginx calls a lingering close. A refusal sent while the request body is still arriving (a
 * 413 for an over-size upload, a 401 before the body is read) closes the connection; closed at
 * once, the unread bytes make the kernel reset it, and a client still sending (Node's own fetch)
 * sees EPIPE instead of the answer. So such an answer says `Connection: close`, the socket's
 * writing side is shut once the answer is out, and the rest of the body is read and discarded
 * until it ends, or `bounds.bytes` more arrive, or `bounds.ms` pass: then the socket is closed.
 */
export function lingering(listener: Listener, bounds: LingerBounds = LINGER_BOUNDS): Listener {
  return (req, res) => {
    if (mayHaveBody(req)) watch(req, res, bounds);
    listener(req, res);
  };
}

/** A body is declared by its length or its chunking; a request with neither (most GETs) costs nothing here. */
function mayHaveBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

type WriteHead = (this: ServerResponse, ...args: unknown[]) => ServerResponse;

function watch(req: IncomingMessage, res: ServerResponse, bounds: LingerBounds): void {
  const writeHead = res.writeHead as WriteHead;
  // Node writes every response's head through writeHead, explicit or implicit: the last moment
  // the connection's fate can still be told to the client.
  (res as { writeHead: WriteHead }).writeHead = function (this: ServerResponse, ...args: unknown[]) {
    const status = typeof args[0] === 'number' ? args[0] : this.statusCode;
    if (status >= 400 && !req.complete) this.setHeader('connection', 'close');
    return writeHead.apply(this, args);
  };
  // Before Node's own 'finish' listener, which is what closes a `Connection: close` socket at once.
  const socket = req.socket;
  res.prependOnceListener('finish', () => {
    if (req.complete || typeof socket.destroySoon !== 'function') return;
    // Read here, not by Node's dump of the body, which drops the bytes unseen: the bound counts them.
    let read = 0;
    let closing = false;
    req.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (closing && read > bounds.bytes) socket.destroy();
    });
    socket.destroySoon = () => {
      Reflect.deleteProperty(socket, 'destroySoon');
      closing = true;
      socket.end();
      const timer = setTimeout(() => socket.destroy(), bounds.ms);
      socket.once('close', () => clearTimeout(timer));
      // Everything read, nothing left for the kernel to reset on: closed once the answer is flushed.
      req.once('end', () => (socket.writableFinished ? socket.destroy() : socket.once('finish', () => socket.destroy())));
    };
  });
  // After Node's listener: when it kept the connection (no `Connection: close`), it reads the rest itself.
  res.once('finish', () => Reflect.deleteProperty(socket, 'destroySoon'));
}
