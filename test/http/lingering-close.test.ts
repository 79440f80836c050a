import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { resolveLocalhostNames } from '../loopback-names.js';
import { fallbackHost } from '../site/serve-helpers.js';
import { startApp, type TestApp } from '../helpers.js';

// Issue 36, part 4: a refusal sent while the body is still arriving reaches the client (a lingering
// close, src/http/linger.ts). Through a listening server, as a client on the network sees it.

const MiB = 1024 * 1024;
/** The time bound, shortened (the default is 10 s); the byte bound is the default, 64 MiB. */
const LINGER_MS = 1500;

let t: TestApp;
let port: number;
let siteHost: string;
before(async () => {
  resolveLocalhostNames();
  t = await startApp({}, { linger: { bytes: 64 * MiB, ms: LINGER_MS } });
  port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
  siteHost = await fallbackHost(t);
});
after(() => t.close());

/** A body sent in 256 KiB chunks as they are asked for: the server answers long before its end. */
function streamed(bytes: number, fill = 0x20): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= bytes) return controller.close();
      const size = Math.min(256 * 1024, bytes - sent);
      sent += size;
      controller.enqueue(new Uint8Array(size).fill(fill));
    },
  });
}

async function post(url: string, headers: Record<string, string>, body: ReadableStream<Uint8Array> | Uint8Array) {
  const res = await fetch(url, { method: 'POST', headers, body, duplex: 'half' } as RequestInit);
  return {
    status: res.status,
    type: res.headers.get('content-type') ?? '',
    connection: res.headers.get('connection'),
    text: await res.text(),
  };
}

function assertProblem(res: Awaited<ReturnType<typeof post>>, status: number, code: string) {
  assert.equal(res.status, status, res.text.slice(0, 200));
  assert.match(res.type, /^application\/problem\+json/);
  assert.equal(JSON.parse(res.text).code, code);
}

describe('a refusal while the body is still arriving', () => {
  test('12 uploads over 10 MiB through fetch each read the 413 problem+json', async () => {
    const api = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 12; i++) {
      // Half with a Content-Length (refused from the header), half chunked (refused while reading).
      const body = i % 2 === 0 ? new Uint8Array(10 * MiB + 1) : streamed(24 * MiB);
      const res = await post(`${api}/v0/files`, { 'x-api-key': t.key, 'content-type': 'image/png' }, body);
      assertProblem(res, 413, 'payload_too_large');
      assert.equal(res.connection, 'close');
    }
  });

  test('12 JSON bodies over the body limit through fetch each read the 413 problem+json', async () => {
    const api = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 12; i++) {
      const body = i % 2 === 0 ? new Uint8Array(MiB + 1).fill(0x20) : streamed(16 * MiB);
      const res = await post(`${api}/v0/persons`, { 'x-api-key': t.key, 'content-type': 'application/json' }, body);
      assertProblem(res, 413, 'payload_too_large');
    }
  });

  test('an upload without an API key reads its 401, the body not read at all', async () => {
    for (let i = 0; i < 4; i++) {
      const res = await post(`http://127.0.0.1:${port}/v0/files`, { 'content-type': 'image/png' }, streamed(24 * MiB));
      assertProblem(res, 401, 'unauthorized');
      assert.equal(res.connection, 'close');
    }
  });

  test('the visitor plane: over-size reports and lead forms through fetch each read their refusal', async () => {
    const site = `http://${siteHost}:${port}`;
    // A browser's user agent: a bot's report is answered 204 before its body is read.
    const browser = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36';
    for (let i = 0; i < 6; i++) {
      const body = () => (i % 2 === 0 ? new Uint8Array(MiB).fill(0x20) : streamed(8 * MiB));
      // A report over its limit is bad input like any other: 400 (src/site/measure/collect.ts).
      const report = await post(`${site}/_pam/collect`, { 'content-type': 'text/plain', 'user-agent': browser }, body());
      assert.equal(report.status, 400, report.text.slice(0, 200));
      assert.match(report.text, /A report is at most/);
      const form = await post(`${site}/_pam/forms`, { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': browser }, body());
      assert.equal(form.status, 413, form.text.slice(0, 200));
      assert.match(form.type, /^text\/html/);
    }
  });

  test('a well-sized request on the same server still keeps its connection', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/v0/persons`, {
      method: 'POST',
      headers: { 'x-api-key': t.key, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Kept' }),
    });
    assert.equal(res.status, 201);
    assert.notEqual(res.headers.get('connection'), 'close');
    await res.text();
  });
});

/**
 * A raw connection that keeps its own side open whatever the server does: what it read, when the
 * answer came, when the server had written it (the lingering's start, on the server's clock: the
 * client's data callback can come late on a loaded machine), and when the server's end closed.
 */
function rawUpload(head: string, write: (socket: net.Socket) => void) {
  return new Promise<{ answer: string; answeredAt: number; sentAt: number; closedAt: number }>((resolve, reject) => {
    const start = Date.now();
    let answer = '';
    let answeredAt = 0;
    let sentAt = 0;
    t.app.server.once('request', (_req: unknown, res: { once(event: 'finish', listener: () => void): void }) =>
      res.once('finish', () => {
        sentAt = Date.now() - start;
      }),
    );
    t.app.server.once('connection', (served: net.Socket) =>
      served.once('close', () => {
        const closedAt = Date.now() - start;
        setTimeout(() => {
          socket.destroy();
          resolve({ answer, answeredAt, sentAt, closedAt });
        }, 50);
      }),
    );
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      if (!answeredAt) answeredAt = Date.now() - start;
      answer += chunk;
    });
    socket.on('error', () => {}); // a reset once a bound is passed is what is tested
    socket.on('connect', () => {
      socket.write(head);
      write(socket);
    });
    setTimeout(() => reject(new Error('the server never closed the connection')), 20_000).unref();
  });
}

const uploadHead = (length: number, key: string) =>
  `POST /v0/files HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nx-api-key: ${key}\r\ncontent-type: image/png\r\ncontent-length: ${length}\r\n\r\n`;

describe('the lingering is bounded', () => {
  test('a body that ends within the bounds is read to its end, then the connection closes at once', async () => {
    const result = await rawUpload(uploadHead(12 * MiB, t.key), (socket) => {
      socket.write(Buffer.alloc(12 * MiB));
    });
    assert.match(result.answer, /^HTTP\/1\.1 413 /);
    assert.match(result.answer, /"code":"payload_too_large"/);
    assert.ok(result.closedAt - result.answeredAt < LINGER_MS / 2, `closed ${result.closedAt - result.answeredAt} ms after the answer`);
  });

  test('a client that trickles its body past the time bound is cut off then', async () => {
    let timer: NodeJS.Timeout | undefined;
    const result = await rawUpload(uploadHead(11 * MiB, t.key), (socket) => {
      timer = setInterval(() => socket.writable && socket.write('x'), 100);
    });
    clearInterval(timer);
    assert.match(result.answer, /^HTTP\/1\.1 413 /);
    assert.ok(result.sentAt > 0, 'the server finished its answer');
    const lingered = result.closedAt - result.sentAt;
    assert.ok(lingered >= LINGER_MS - 100 && lingered < LINGER_MS + 1500, `lingered ${lingered} ms`);
  });

  test('a client that sends more than 64 MiB after the answer is cut off', async () => {
    let written = 0;
    const total = 256 * MiB;
    const result = await rawUpload(uploadHead(total, t.key), (socket) => {
      const chunk = Buffer.alloc(MiB);
      const more = () => {
        while (written < total && socket.writable) {
          written += chunk.length;
          if (!socket.write(chunk)) return void socket.once('drain', more);
        }
      };
      more();
    });
    assert.match(result.answer, /^HTTP\/1\.1 413 /);
    assert.ok(written < 128 * MiB, `the client wrote ${written / MiB} MiB of ${total / MiB}`);
    assert.ok(written > 64 * MiB, `cut off after ${written / MiB} MiB, before the bound`);
    assert.ok(result.closedAt - result.answeredAt < LINGER_MS, 'closed by the byte bound, not the time bound');
  });
});
