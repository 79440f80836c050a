import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { USER_AGENT } from '../browser.js';
import type { Json, TestApp } from '../helpers.js';

export const TOOL_NAMES = [
  'search_persons',
  'search_accounts',
  'search_audiences',
  'get_page',
  'list_pages',
  'list_templates',
  'create_page',
  'create_audience',
  'create_segment',
  'write_version',
  'publish_version',
  'regenerate',
  'get_page_analytics',
  'list_recent_visits',
  'get_experiment_results',
  'list_deals',
  'pipeline_report',
  'create_link',
  'list_sites',
  'create_site',
  'list_experiences',
  'get_experience_analytics',
  'create_experience',
  'update_experience',
];

export const WRITE_TOOLS = [
  'create_page',
  'create_audience',
  'create_segment',
  'write_version',
  'publish_version',
  'regenerate',
  'create_link',
  'create_site',
  'create_experience',
  'update_experience',
];

/** The service listening on a loopback port: the MCP clients talk to it over real sockets. */
export async function listening(t: TestApp): Promise<string> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
}

/** The SDK's own client over Streamable HTTP, with the key sent as MCP clients send it. */
export async function httpClient(baseUrl: string, key: string, header: 'bearer' | 'x-api-key' = 'bearer'): Promise<Client> {
  const client = new Client({ name: 'pam-test', version: '1.0.0' });
  const headers: Record<string, string> = header === 'bearer' ? { authorization: `Bearer ${key}` } : { 'x-api-key': key };
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), { requestInit: { headers } }));
  return client;
}

export async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The structured answer of a call that must succeed. */
export async function ok(client: Client, name: string, args: Record<string, unknown>): Promise<Json> {
  const result = await call(client, name, args);
  if (result.isError) throw new Error(`${name} failed: ${textOf(result)}`);
  return result.structuredContent;
}

export const textOf = (result: CallToolResult) => result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

/** GET a full URL from the listening server, its host sent as the Host header (the name resolves nowhere here). */
export function fetchServed(baseUrl: string, url: string): Promise<{ status: number; text: string }> {
  const target = new URL(url);
  const port = new URL(baseUrl).port;
  return new Promise((resolve, reject) => {
    const req = http.get(
      { host: '127.0.0.1', port, path: `${target.pathname}${target.search}`, headers: { host: target.host, 'user-agent': USER_AGENT } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
  });
}
