import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourcesResultSchema,
  ListResourceTemplatesRequestSchema,
  ListResourceTemplatesResultSchema,
  ListToolsRequestSchema,
  ListToolsResultSchema,
  McpError,
  ReadResourceRequestSchema,
  ReadResourceResultSchema,
} from '@modelcontextprotocol/sdk/types.js';

export interface McpProxyOptions {
  /** The service's base URL, e.g. `https://api.example.com` (PAM_API_URL). */
  apiUrl: string;
  /** The tenant's API key (PAM_API_KEY). */
  apiKey: string;
  fetch?: typeof fetch;
}

/** Any failure of the service becomes an MCP error the desktop client shows, never a crash. */
function asMcpError(err: unknown): McpError {
  if (err instanceof McpError) return err;
  return new McpError(ErrorCode.InternalError, `The service did not answer: ${err instanceof Error ? err.message : String(err)}`);
}

/**
 * The MCP server a desktop assistant starts on stdio: every message is passed on to the running
 * service's Streamable HTTP endpoint (`<apiUrl>/mcp`) with the key, so the tools, their schemas
 * and every rule are the service's own, defined once there.
 */
export async function startMcpProxy(options: McpProxyOptions, local: Transport): Promise<{ close(): Promise<void> }> {
  const upstream = new Client({ name: 'pam-mcp', version: '0.1.0' });
  await upstream.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', options.apiUrl), {
      requestInit: { headers: { authorization: `Bearer ${options.apiKey}` } },
      ...(options.fetch ? { fetch: options.fetch } : {}),
    }),
  );
  const info = upstream.getServerVersion() ?? { name: 'page-audience-api', version: '0.1.0' };
  const instructions = upstream.getInstructions();
  const server = new Server(info, { capabilities: { tools: {}, resources: {} }, ...(instructions ? { instructions } : {}) });

  const forward = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (err) {
      throw asMcpError(err);
    }
  };
  server.setRequestHandler(ListToolsRequestSchema, (request) =>
    forward(() => upstream.request({ method: 'tools/list', params: request.params ?? {} }, ListToolsResultSchema)),
  );
  server.setRequestHandler(CallToolRequestSchema, (request) =>
    forward(() => upstream.request({ method: 'tools/call', params: request.params }, CallToolResultSchema)),
  );
  server.setRequestHandler(ListResourcesRequestSchema, (request) =>
    forward(() => upstream.request({ method: 'resources/list', params: request.params ?? {} }, ListResourcesResultSchema)),
  );
  server.setRequestHandler(ListResourceTemplatesRequestSchema, (request) =>
    forward(() =>
      upstream.request({ method: 'resources/templates/list', params: request.params ?? {} }, ListResourceTemplatesResultSchema),
    ),
  );
  server.setRequestHandler(ReadResourceRequestSchema, (request) =>
    forward(() => upstream.request({ method: 'resources/read', params: request.params }, ReadResourceResultSchema)),
  );
  await server.connect(local);
  return {
    close: async () => {
      await server.close();
      await upstream.close();
    },
  };
}
