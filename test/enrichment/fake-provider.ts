import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const PROVIDER_TOKEN = 'provider-token-0123456789';
export const PROVIDER_PATH = '/v1/enrich';

/** What the test provider does for one question: answer with a status and body, or never answer. */
export type Reply = { status: number; body: unknown } | 'never';

/** One question the provider was asked, after its method, path, auth and body were checked. */
export interface Asked {
  ip?: string;
  email?: string;
  domain?: string;
}

/**
 * The enrichment provider of docs/enrichment.md, played by a node:http server: every request must
 * be `POST <PROVIDER_PATH>` with the bearer token and a JSON body of either `{ip}` or `{email,
 * domain}` and nothing else; a request that is not is answered 400 and recorded in `refused`.
 */
export async function fakeProvider(answer: (asked: Asked) => Reply) {
  const asked: Asked[] = [];
  const refused: string[] = [];
  const hanging = new Set<ServerResponse>();
  const refuse = (res: ServerResponse, why: string) => {
    refused.push(why);
    res.writeHead(400).end();
  };
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== 'POST') return refuse(res, `method ${req.method}`);
    if (req.url !== PROVIDER_PATH) return refuse(res, `path ${req.url}`);
    if (req.headers.authorization !== `Bearer ${PROVIDER_TOKEN}`) return refuse(res, `auth ${req.headers.authorization}`);
    if (!String(req.headers['content-type']).startsWith('application/json')) return refuse(res, 'content-type');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      return refuse(res, 'not JSON');
    }
    const keys = Object.keys(body).sort().join(',');
    const strings = Object.values(body).every((v) => typeof v === 'string' && v !== '');
    if (!strings || (keys !== 'ip' && keys !== 'domain,email')) return refuse(res, `body ${JSON.stringify(body)}`);
    asked.push(body as Asked);
    const reply = answer(body as Asked);
    if (reply === 'never') {
      hanging.add(res);
      res.on('close', () => hanging.delete(res));
      return;
    }
    const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
    res.writeHead(reply.status, { 'content-type': 'application/json' }).end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${PROVIDER_PATH}`,
    asked,
    refused,
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A company as a provider answers it. */
export const company = (name: string, domain: string) => ({
  company: { name, domain, industry: 'Software', employees: 120, country: 'de' },
});
