import dgram from 'node:dgram';
import dnsPacket from 'dns-packet';

/**
 * A DNS server on a loopback UDP port for the domain-verification tests (DNS_RESOLVERS points at
 * it). Each name answers as the test sets it: TXT values, NXDOMAIN, or silence (a timeout).
 * Packets are read and written by dns-packet, not by hand.
 */
export interface FakeDns {
  /** `127.0.0.1:<port>` (or `[::1]:<port>`), as DNS_RESOLVERS takes it. */
  address: string;
  /**
   * The TXT records a name answers with (case-insensitive name), each one string or several
   * (a long record's parts); unset names are NXDOMAIN.
   */
  txt(name: string, records: Records): void;
  /** Queries received, by name. */
  queries: string[];
  close(): Promise<void>;
}

type Records = (string | string[])[] | 'timeout' | 'nxdomain';

export async function startFakeDns(family: 'udp4' | 'udp6' = 'udp4'): Promise<FakeDns> {
  const answers = new Map<string, Records>();
  const queries: string[] = [];
  const socket = dgram.createSocket(family);
  socket.on('message', (message, remote) => {
    let query: dnsPacket.Packet;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return;
    }
    const question = query.questions?.[0];
    if (!question) return;
    const name = question.name.toLowerCase();
    queries.push(name);
    const answer = answers.get(name) ?? 'nxdomain';
    if (answer === 'timeout') return;
    const reply = dnsPacket.encode({
      type: 'response',
      id: query.id,
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (answer === 'nxdomain' ? 3 : 0),
      questions: [question],
      answers:
        answer === 'nxdomain' || question.type !== 'TXT'
          ? []
          : answer.map((value) => ({ type: 'TXT' as const, name: question.name, ttl: 60, class: 'IN' as const, data: value })),
    });
    socket.send(reply, remote.port, remote.address);
  });
  const host = family === 'udp4' ? '127.0.0.1' : '::1';
  await new Promise<void>((resolve) => socket.bind(0, host, resolve));
  const { port } = socket.address();
  return {
    address: family === 'udp4' ? `${host}:${port}` : `[${host}]:${port}`,
    txt: (name, records) => answers.set(name.toLowerCase(), records),
    queries,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}
