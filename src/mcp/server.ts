import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { fieldErrors } from '../http/errors.js';
import type { OriginOf } from '../http/public-origin.js';
import { type Api, callJson, callText, ToolProblem } from './api.js';
import type { RouteCatalogue } from './catalogue.js';
import { argumentName } from './schemas.js';
import type { Tool } from './tools.js';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

export const SERVER_INFO = { name: 'page-audience-api', version: '0.1.0' };

const INSTRUCTIONS =
  'Manage pages and their audiences: create a page, an audience for a person or account, write and publish its version, and link it on a verified domain; read analytics, recent visits and experiment results. Write tools take an optional idempotencyKey: reuse it when retrying a call so the change is made once.';

const READ_ONLY_NOTE = " (This API key is read-only: calling this tool returns the API's 403 refusal. Use a key with the write scope.)";

/** The tools with their argument validators, compiled once per app, and tools/list's answer serialised once per scope. */
export interface ToolSet {
  tools: Tool[];
  byName: Map<string, { tool: Tool; validate: ValidateFunction }>;
  /** The JSON of tools/list's `tools` for a key that may write, and for a read-only one. */
  listed: { write: string; read: string };
}

export function toolSet(tools: Tool[]): ToolSet {
  // The arguments are checked against the very schema tools/list shows, before any API request.
  const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));
  return {
    tools,
    byName: new Map(tools.map((tool) => [tool.name, { tool, validate: ajv.compile(tool.inputSchema) }])),
    listed: { write: JSON.stringify(listedTools(tools, true)), read: JSON.stringify(listedTools(tools, false)) },
  };
}

function listedTools(tools: Tool[], canWrite: boolean) {
  return tools.map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: tool.write && !canWrite ? `${tool.description}${READ_ONLY_NOTE}` : tool.description,
    inputSchema: tool.inputSchema as { type: 'object' },
    outputSchema: tool.outputSchema as { type: 'object' },
    annotations: { title: tool.title, ...tool.annotations },
  }));
}

/**
 * What tools/list answers in place of its tools: a string no stored value or argument can hold (a
 * NUL is refused everywhere), replaced in the response by the list serialised once (`fillToolLists`).
 */
const slot = (scope: 'write' | 'read') => `\u0000pam:tools:${scope}\u0000`;
const SLOTS = { write: JSON.stringify([slot('write')]), read: JSON.stringify([slot('read')]) };

/** The transport's response text with each tools/list slot replaced by the serialised list. */
export function fillToolLists(text: string, set: ToolSet): string {
  if (!text.includes('pam:tools:')) return text;
  return text.replaceAll(SLOTS.write, set.listed.write).replaceAll(SLOTS.read, set.listed.read);
}

/** What one caller may do: its key's API, and whether the key has the write scope. */
export interface Caller {
  api: Api;
  canWrite: boolean;
  /** A tenant domain's public origin, as the MCP request reaches the service. */
  originOf: OriginOf;
}

const errorResult = (text: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text }] });

/**
 * The API's path spelling of an identifier (`page_id`, as in its paths and the resource URIs) is
 * taken for the argument's own (`pageId`): a caller reading the paths is not refused for it.
 */
function withPathSpellings(tool: Tool, args: Record<string, unknown>): Record<string, unknown> {
  const known = tool.inputSchema.properties ?? {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    const argument = argumentName(key);
    out[argument !== key && argument in known && !(argument in args) ? argument : key] = value;
  }
  return out;
}

async function callTool(set: ToolSet, caller: Caller, name: string, given: Record<string, unknown>): Promise<CallToolResult> {
  const found = set.byName.get(name);
  if (!found) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
  const args = withPathSpellings(found.tool, given);
  if (!found.validate(args)) {
    const errors = fieldErrors(found.validate.errors ?? []);
    return errorResult(
      [
        `Invalid arguments: ${errors.map((e) => `${e.path || '/'} ${e.message}`).join('; ')}`,
        ...errors.map((e) => `field ${e.path || '/'}: ${e.message}`),
      ].join('\n'),
    );
  }
  try {
    const { structured, summary } = await found.tool.run(args, caller.api, caller.originOf);
    return {
      structuredContent: structured,
      // The summary for the reader; the JSON for clients that pass only text to the model.
      content: [
        { type: 'text', text: summary },
        { type: 'text', text: JSON.stringify(structured) },
      ],
    };
  } catch (err) {
    if (err instanceof ToolProblem) return errorResult(err.message);
    throw err;
  }
}

const PAGE_URI = /^pam:\/\/pages\/([^/?#]+)(\/preview)?(?:\?(.*))?$/;

/** `pam://pages/{page_id}` as JSON, `pam://pages/{page_id}/preview?audienceId=` as the rendered HTML. */
async function readResource(catalogue: RouteCatalogue, api: Api, uri: string) {
  const match = PAGE_URI.exec(uri);
  if (!match)
    throw new McpError(
      ErrorCode.InvalidParams,
      `Unknown resource ${uri}: pam://pages/{page_id} or pam://pages/{page_id}/preview?audienceId=`,
    );
  const pageId = decodeURIComponent(match[1] ?? '');
  const path = catalogue.get('getPage').url.replace(':page_id', encodeURIComponent(pageId));
  try {
    if (!match[2]) {
      const page = await callJson<unknown>(api, { method: 'GET', path });
      return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(page) }] };
    }
    const audienceId = new URLSearchParams(match[3] ?? '').get('audienceId');
    const html = await callText(api, {
      method: 'GET',
      path: catalogue.get('previewPage').url.replace(':page_id', encodeURIComponent(pageId)),
      query: audienceId ? { audienceId } : {},
    });
    return { contents: [{ uri, mimeType: 'text/html', text: html }] };
  } catch (err) {
    if (err instanceof ToolProblem) throw new McpError(-32002, `Resource ${uri}: ${err.message}`);
    throw err;
  }
}

interface PageList {
  items: { pageId: string; name: string; title: string }[];
  hasMore: boolean;
  nextCursor: string | null;
}

async function listResources(catalogue: RouteCatalogue, api: Api, cursor: string | undefined) {
  try {
    const list = await callJson<PageList>(api, {
      method: 'GET',
      path: catalogue.get('listPages').url,
      query: { limit: 50, ...(cursor ? { cursor } : {}) },
    });
    const resources = list.items.flatMap((page) => [
      { uri: `pam://pages/${page.pageId}`, name: page.name, title: page.title, mimeType: 'application/json' },
      { uri: `pam://pages/${page.pageId}/preview`, name: `${page.name} (preview)`, mimeType: 'text/html' },
    ]);
    return list.hasMore && list.nextCursor ? { resources, nextCursor: list.nextCursor } : { resources };
  } catch (err) {
    if (err instanceof ToolProblem) throw new McpError(ErrorCode.InvalidParams, err.message);
    throw err;
  }
}

/** One MCP server for one caller: the tools, and the tenant's pages as resources. */
export function mcpServer(set: ToolSet, catalogue: RouteCatalogue, caller: Caller): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS });
  // Serialised once (toolSet): the transport's text carries a slot that fillToolLists fills.
  const listed = { tools: [slot(caller.canWrite ? 'write' : 'read')] as unknown as ReturnType<typeof listedTools> };
  server.setRequestHandler(ListToolsRequestSchema, async () => listed);
  server.setRequestHandler(CallToolRequestSchema, async (request) =>
    callTool(set, caller, request.params.name, request.params.arguments ?? {}),
  );
  server.setRequestHandler(ListResourcesRequestSchema, async (request) => listResources(catalogue, caller.api, request.params?.cursor));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      { uriTemplate: 'pam://pages/{page_id}', name: 'page', title: 'A page as JSON', mimeType: 'application/json' },
      {
        uriTemplate: 'pam://pages/{page_id}/preview{?audienceId}',
        name: 'page-preview',
        title: 'A page rendered for an audience (none: without one), as HTML',
        mimeType: 'text/html',
      },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => readResource(catalogue, caller.api, request.params.uri));
  return server;
}
