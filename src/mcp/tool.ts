import type { OriginOf } from '../http/public-origin.js';
import { type Api, callJson, requestOf } from './api.js';
import type { Operation } from './catalogue.js';
import { idempotencyKeyArgument, type JsonSchema, mergedInput, plainSchema } from './schemas.js';

/** The shape every MCP tool shares (tools.ts and onsite-tools.ts build them). */
export type Args = Record<string, unknown>;
export type Body = Record<string, unknown>;

export interface ToolAnswer {
  structured: Body;
  summary: string;
}

/** One MCP tool: its schemas come from the API's routes, and it runs by calling the API. */
export interface Tool {
  name: string;
  title: string;
  description: string;
  /** Needs the write scope (every write tool takes `idempotencyKey`). */
  write: boolean;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
  /** `originOf`: a tenant domain's public origin for the MCP request (http/public-origin.ts). */
  run(args: Args, api: Api, originOf: OriginOf): Promise<ToolAnswer>;
}

export interface Shape {
  name: string;
  title: string;
  description: string;
  write?: { destructive: boolean; idempotent: boolean };
}

export function tool(shape: Shape, inputSchema: JsonSchema, outputSchema: JsonSchema, run: Tool['run']): Tool {
  const write = shape.write;
  if (write) inputSchema.properties = { ...inputSchema.properties, idempotencyKey: idempotencyKeyArgument() };
  return {
    name: shape.name,
    title: shape.title,
    description: shape.description,
    write: write !== undefined,
    annotations: {
      readOnlyHint: write === undefined,
      destructiveHint: write?.destructive ?? false,
      idempotentHint: write?.idempotent ?? true,
      openWorldHint: false,
    },
    inputSchema,
    outputSchema: objectSchema(outputSchema),
    run,
  };
}

/** MCP wants an object at the root of an output schema; every answer the tools pass on is one. */
function objectSchema(schema: JsonSchema): JsonSchema {
  if (schema.type !== 'object') throw new Error(`An MCP tool's output schema must be an object, got ${JSON.stringify(schema.type)}`);
  return schema;
}

/** A tool that is one API operation: its arguments are the operation's parameters, query and body. */
export function oneCall(shape: Shape, operation: Operation, summary: (body: Body, args: Args) => string, fixed?: Args) {
  // A tool whose body is fixed (publish_version's status) takes only the path's ids: the rest of
  // the PATCH body is the resource sent back as read, nothing an assistant should fill in.
  const input = mergedInput({ params: [operation.params], rest: fixed ? [] : [operation.querystring, operation.body] });
  return tool(shape, input, plainSchema(operation.response), async (args, api) => {
    const body = await callJson<Body>(api, requestOf(operation, args, fixed));
    return { structured: body, summary: summary(body, args) };
  });
}

export const count = (body: Body, noun: string) => {
  const items = Array.isArray(body.items) ? body.items.length : 0;
  const total = typeof body.totalCount === 'number' ? ` of ${body.totalCount}` : '';
  return `${items}${total} ${noun}${body.hasMore === true ? ` (more: pass nextCursor "${String(body.nextCursor)}" as cursor)` : ''}`;
};
export const READ_NOTE = 'Read-only.';
