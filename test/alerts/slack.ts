import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Json } from '../helpers.js';

// Slack played by a server that checks each request as Slack's incoming webhooks document it
// (POST, JSON with `text` and `blocks`, answer "ok").

export interface Received {
  path: string;
  body: { text: string; blocks: Json[] };
}

/** An incoming webhook: `/services/T…/B…/…`, JSON only; answers as Slack does, or `status` while set. */
export async function slack(): Promise<{
  url: (hook: string) => string;
  received: Received[];
  status: { next: number[] };
  close: () => Promise<void>;
}> {
  const received: Received[] = [];
  const status = { next: [] as number[] };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const bad = (why: string) => res.writeHead(400, { 'content-type': 'text/plain' }).end(why);
      if (req.method !== 'POST') return bad('invalid_method');
      if (!/^\/services\/T[A-Z0-9]+\/B[A-Z0-9]+\/[A-Za-z0-9]+$/.test(req.url ?? '')) return res.writeHead(404).end('no_service');
      if (!String(req.headers['content-type']).startsWith('application/json')) return bad('invalid_payload');
      let body: Received['body'];
      try {
        body = JSON.parse(raw) as Received['body'];
      } catch {
        return bad('invalid_payload');
      }
      if (typeof body.text !== 'string' || !Array.isArray(body.blocks)) return bad('invalid_payload');
      const forced = status.next.shift();
      if (forced === 429) return res.writeHead(429, { 'retry-after': '0' }).end('rate_limited');
      if (forced !== undefined) return res.writeHead(forced).end('server_error');
      received.push({ path: req.url ?? '', body });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: (hook) => `http://127.0.0.1:${port}/services/T0001/B0001/${hook}`,
    received,
    status,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
