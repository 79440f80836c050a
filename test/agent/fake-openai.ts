import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Json } from '../helpers.js';

export interface FakeRequest {
  body: Json;
  headers: http.IncomingHttpHeaders;
  /** The user message, parsed (the prompt's inputs). */
  inputs: Json;
  at: number;
}

export interface FakeAnswer {
  status?: number;
  headers?: Record<string, string>;
  /** A completion whose message content is this text; or, with `raw`, this body as is. */
  content?: string;
  raw?: unknown;
  /** Wait this long (or until `hold` resolves) before answering. */
  delayMs?: number;
  hold?: Promise<void>;
}

/** A small OpenAI-compatible Chat Completions server on localhost, answering as `answer` decides. */
export async function fakeOpenAi(answer: (request: FakeRequest) => FakeAnswer | Promise<FakeAnswer>) {
  const requests: FakeRequest[] = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', async () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(text);
      let inputs: Json;
      try {
        inputs = JSON.parse(body.messages?.find((m: Json) => m.role === 'user')?.content ?? 'null');
      } catch {
        inputs = null;
      }
      const request = { body, headers: req.headers, inputs, at: Date.now() };
      requests.push(request);
      const a = await answer(request);
      if (a.delayMs) await new Promise((r) => setTimeout(r, a.delayMs));
      if (a.hold) await a.hold;
      if (res.destroyed) return;
      const payload =
        a.raw ??
        (a.content !== undefined
          ? {
              id: 'chatcmpl-1',
              object: 'chat.completion',
              created: Math.floor(Date.now() / 1000),
              model: body.model,
              choices: [{ index: 0, message: { role: 'assistant', content: a.content }, finish_reason: 'stop' }],
            }
          : { error: { message: 'failed', type: 'server_error' } });
      res.writeHead(a.status ?? 200, { 'content-type': 'application/json', ...a.headers }).end(JSON.stringify(payload));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Valid content that names the person it was written for. */
export const contentFor = (name: string) =>
  JSON.stringify({ headline: `Hi ${name}`, subheadline: 'Made for you', sections: [{ heading: 'About', body: 'Only facts.' }] });
