import net from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of one upstream (PostgreSQL), to fail the network between the
 * service and its database without touching the database server itself (other tests share it).
 *
 * - `cut()`: every proxied connection is destroyed and the port is closed, so new connections are
 *   refused (ECONNREFUSED): a database that went away.
 * - `blackhole()`: nothing passes either way any more, on open and on new connections, which are
 *   accepted and then never answered: a database that is unreachable (packets dropped).
 *   Bytes are held, not lost, so `restore()` lets the held traffic through intact.
 * - `restore()`: back to forwarding, on the same port.
 */
export interface TcpProxy {
  port: number;
  /** Connections accepted so far. */
  accepted(): number;
  /** Proxied connections open now. */
  open(): number;
  cut(): Promise<void>;
  blackhole(): void;
  restore(): Promise<void>;
  close(): Promise<void>;
}

interface Pair {
  client: net.Socket;
  upstream: net.Socket | undefined;
  /** Bytes held while blackholed, by direction. */
  toUpstream: Buffer[];
  toClient: Buffer[];
  /** Set while blackholed for a connection accepted then: opens its upstream on restore. */
  connect?: () => void;
}

export async function startTcpProxy(upstreamHost: string, upstreamPort: number): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  let mode: 'forward' | 'blackhole' = 'forward';
  let accepted = 0;

  const destroy = (pair: Pair) => {
    pair.client.destroy();
    pair.upstream?.destroy();
    pairs.delete(pair);
  };

  const server = net.createServer((client) => {
    accepted++;
    const pair: Pair = { client, upstream: undefined, toUpstream: [], toClient: [] };
    pairs.add(pair);
    client.on('error', () => destroy(pair));
    client.on('close', () => destroy(pair));
    const connectUpstream = () => {
      const upstream = net.connect(upstreamPort, upstreamHost);
      pair.upstream = upstream;
      upstream.on('error', () => destroy(pair));
      upstream.on('close', () => destroy(pair));
      upstream.on('data', (d: Buffer) => (mode === 'blackhole' ? pair.toClient.push(d) : client.write(d)));
    };
    client.on('data', (d: Buffer) => {
      if (mode === 'blackhole' || !pair.upstream) pair.toUpstream.push(d);
      else pair.upstream.write(d);
    });
    // A connection accepted while blackholed reaches nothing until restored.
    if (mode === 'forward') connectUpstream();
    else pair.connect = connectUpstream;
  });
  server.on('error', () => {});

  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  await listen(0);
  const { port } = server.address() as net.AddressInfo;

  return {
    port,
    accepted: () => accepted,
    open: () => pairs.size,
    async cut() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const pair of [...pairs]) destroy(pair);
      await closed;
    },
    blackhole() {
      mode = 'blackhole';
    },
    async restore() {
      if (!server.listening) await listen(port);
      mode = 'forward';
      for (const pair of pairs) {
        const connect = pair.connect;
        if (connect) {
          delete pair.connect;
          connect();
        }
        if (pair.upstream) for (const d of pair.toUpstream.splice(0)) pair.upstream.write(d);
        for (const d of pair.toClient.splice(0)) pair.client.write(d);
      }
    },
    async close() {
      const closed = server.listening ? new Promise<void>((resolve) => server.close(() => resolve())) : Promise.resolve();
      for (const pair of [...pairs]) destroy(pair);
      await closed;
    },
  };
}
