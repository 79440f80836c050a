import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Json } from './helpers.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Waits for the exit; resolves with the exit code (or the signal's name). */
  exited: Promise<number | string>;
  kill(signal?: NodeJS.Signals): Promise<number | string>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * How long a start may take: a cold start through tsx takes 3–6 s on a quiet machine and up to about
 * 30 s on a CI machine running four suites at once.
 */
export const START_MS = 45_000;

/** A test's time budget: each of its server starts at START_MS, plus the work it does between them. */
export const startsAndWork = (starts: number, workMs: number) => ({ timeout: starts * START_MS + workMs });

/**
 * Starts `src/server.ts` as its own process and waits until it says it listens on the port it was
 * given, then until /healthz answers. A free port can be taken by another test between our probe and
 * the child's bind: the child then exits saying so, and we try another port. Polling /healthz alone
 * would take whatever else answers on that port for our server.
 */
export async function startServer(env: Record<string, string>, timeoutMs = START_MS): Promise<ServerProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(env, timeoutMs);
    } catch (err) {
      if (!(err instanceof PortTaken) || attempt >= 5) throw err;
    }
  }
}

class PortTaken extends Error {}

async function startOnce(env: Record<string, string>, timeoutMs: number): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', HOST: '127.0.0.1', PORT: String(port), RATE_LIMIT_PER_SECOND: '1000000', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  let running = true;
  void exited.then(() => (running = false));
  while (running) {
    if (out.includes(`Listening on ${url};`)) {
      try {
        if ((await fetch(`${url}/healthz`)).ok) break;
      } catch {
        // held until the first tenant exists
      }
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not become healthy in ${timeoutMs} ms:\n${err}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!running) {
    await exited;
    if (err.includes('EADDRINUSE')) throw new PortTaken(err);
    throw new Error(`server exited during start-up:\n${err}`);
  }
  return {
    url,
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    kill: (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** A JSON call to a server process with an API key: its status and parsed body (`{text}` when not JSON). */
export async function callServer(
  server: ServerProcess,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let parsed: Json;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = { text };
  }
  return { status: res.status, body: parsed };
}

/** Polls `check` until it holds, or fails after `timeoutMs` naming what it waited for and `detail()`. */
export async function waitFor(
  what: string,
  timeoutMs: number,
  check: () => boolean | Promise<boolean>,
  detail: () => string = () => '',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail() ? `: ${detail()}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
