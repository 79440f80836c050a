/**
 * The load generator, run as its own process (pinned to its own core by the harness): autocannon
 * with 50 connections, each request drawn from the scenario's list. Prints one JSON result line.
 */
import fs from 'node:fs';
import autocannon from 'autocannon';

export interface LoadSpec {
  url: string;
  headers: Record<string, string>;
  method: 'GET' | 'POST' | 'PATCH';
  /** Paths to draw from at random. */
  paths: string[];
  /** Bodies: a template where `{n}` becomes a unique number per request. */
  body?: string;
  /** Or bodies to draw from at random (with `bodyType` as their content type). */
  bodies?: string[];
  bodyType?: string;
  /** The status every answer should have when it is not a 2xx (a revalidation's 304). */
  expectedStatus?: number;
  connections: number;
  duration: number;
}

export interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  p999: number;
  errors: number;
  non2xx: number;
}

async function run(spec: LoadSpec): Promise<LoadResult> {
  let n = 0;
  const pick = () => spec.paths[Math.floor(Math.random() * spec.paths.length)]!;
  const bodies = spec.bodies ?? [];
  let unexpected = 0;
  const result = await autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: spec.duration,
    headers: {
      ...spec.headers,
      ...(spec.body ? { 'content-type': 'application/json' } : {}),
      ...(bodies.length > 0 ? { 'content-type': spec.bodyType ?? 'application/json' } : {}),
    },
    requests: [
      {
        method: spec.method,
        setupRequest: (request) => {
          request.path = pick();
          if (spec.body) request.body = spec.body.replaceAll('{n}', `${process.pid}-${Date.now()}-${n++}`);
          else if (bodies.length > 0) request.body = bodies[Math.floor(Math.random() * bodies.length)];
          return request;
        },
        onResponse: (status) => {
          if (spec.expectedStatus !== undefined && status !== spec.expectedStatus) unexpected++;
        },
      },
    ],
  });
  return {
    requests: result.requests.total,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    p999: result.latency.p99_9,
    errors: result.errors + result.timeouts,
    // With an expected status, the answers that are not it; otherwise the answers that are not 2xx.
    non2xx: spec.expectedStatus === undefined ? result.non2xx : unexpected,
  };
}

const spec = JSON.parse(fs.readFileSync(process.argv[2]!, 'utf8')) as LoadSpec;
process.stdout.write(`${JSON.stringify(await run(spec))}\n`);
