/**
 * The harness's processes: the service and the load generator pinned to their cores, and what is
 * read of them from /proc (CPU time, resident memory). Shared by the run (run.ts) and the
 * alternation of two held services (alternate.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LoadResult, LoadSpec } from './load.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const SERVER_CPU = '1';
export const LOAD_CPU = '0';

export async function freePort(): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * npm start's environment and node options (`NAME=value … node <options> dist/server.js`): a bench
 * service starts as npm start does. A variable the bench's own environment sets wins
 * (`GLIBC_TUNABLES= npm run bench`: a run without npm start's).
 */
export function startOptions(): { env: NodeJS.ProcessEnv; args: string[] } {
  const start = (
    JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }
  ).scripts.start.split(' ');
  const env: NodeJS.ProcessEnv = {};
  while (/^[A-Z_]+=/.test(start[0] ?? '')) {
    const [name, ...value] = start.shift()!.split('=');
    env[name!] = process.env[name!] ?? value.join('=');
  }
  if (start[0] !== 'node' || start.at(-1) !== 'dist/server.js')
    throw new Error(`npm start is no longer "[NAME=value …] node <options> dist/server.js": ${start.join(' ')}`);
  return { env, args: start.slice(1, -1) };
}

export function pinned(cpu: string, command: string, args: string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
  const child = spawn('taskset', ['-c', cpu, command, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Read as it comes: a pipe nobody reads fills, and a process writing to it blocks. What a process
  // said last is printed if it dies on its own.
  let said = '';
  const keep = (d: Buffer) => {
    said = (said + d.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.on('exit', (code) => {
    if (code !== null && code !== 0) console.log(`# ${path.basename(args.at(-1) ?? command)} exited with ${code}:\n${said}`);
  });
  return child;
}

export async function waitFor(url: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      const res = await fetch(url);
      if (res.status < 500) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer in ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** CPU seconds (user and system) a process has used so far, from /proc (clock ticks of 1/100 s). */
export function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Peak resident memory of a process while `during` runs, sampled every 100 ms. */
export async function peakRss<T>(pid: number, during: Promise<T>): Promise<[T, number]> {
  let peak = 0;
  const sample = () => {
    try {
      const kb = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
      if (kb) peak = Math.max(peak, Number(kb) * 1024);
    } catch {
      // gone
    }
  };
  const timer = setInterval(sample, 100);
  try {
    const result = await during;
    sample();
    return [result, peak];
  } finally {
    clearInterval(timer);
  }
}

/**
 * Waits until the server has worked off what the last run left queued (a scenario whose requests
 * timed out in the load generator still has them in the server), so it does not weigh on the next.
 */
export async function waitIdle(pid: number, ms = 60_000): Promise<void> {
  const cpuTicks = () => {
    try {
      const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return Number(fields[11]) + Number(fields[12]); // utime + stime, in clock ticks (1/100 s)
    } catch {
      return 0;
    }
  };
  const deadline = Date.now() + ms;
  let before = cpuTicks();
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    const now = cpuTicks();
    if (now - before <= 2) return; // under 10% of a core over the last 250 ms
    before = now;
  }
}

/**
 * Six rounds measuring `off` and `on` in turn (off first in even rounds, on first in odd ones), and
 * the median of each side: one run of each is at the mercy of whatever else the machine does.
 */
export async function alternatingRounds(
  measure: (which: 'off' | 'on') => Promise<{ rps: number; cpu: number }>,
): Promise<Record<'off' | 'on', { rps: number; cpu: number }>> {
  const rounds = { off: { rps: [] as number[], cpu: [] as number[] }, on: { rps: [] as number[], cpu: [] as number[] } };
  for (let round = 0; round < 6; round++) {
    for (const which of round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
      const { rps, cpu } = await measure(which);
      rounds[which].rps.push(rps);
      rounds[which].cpu.push(cpu);
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  return {
    off: { rps: median(rounds.off.rps), cpu: median(rounds.off.cpu) },
    on: { rps: median(rounds.on.rps), cpu: median(rounds.on.cpu) },
  };
}

/**
 * One side of an alternating round on a service: every path served once in the round's state (a
 * random warm-up leaves some of a thousand paths unserved, and their first visits, an experiment's
 * first exposures among them, fall into the measured load), warmed for 2 s, then measured for
 * `seconds`: its requests a second, the service's CPU a request, and the answers that were errors
 * or not as expected.
 */
export async function warmedRound(
  pid: number,
  spec: Omit<LoadSpec, 'duration'>,
  seconds: number,
): Promise<{ rps: number; cpu: number; unexpected: number }> {
  await waitIdle(pid);
  await visitEach(Number(new URL(spec.url).port), spec);
  await load({ ...spec, duration: 2 });
  await waitIdle(pid);
  const before = cpuSeconds(pid);
  const result = await load({ ...spec, duration: seconds });
  return { rps: result.rps, cpu: (cpuSeconds(pid) - before) / Math.max(1, result.requests), unexpected: result.errors + result.non2xx };
}

export function load(spec: LoadSpec): Promise<LoadResult> {
  const file = path.join(os.tmpdir(), `pam-load-${process.pid}-${randomBytes(4).toString('hex')}.json`);
  fs.writeFileSync(file, JSON.stringify(spec));
  return new Promise<LoadResult>((resolve, reject) => {
    const child = pinned(LOAD_CPU, process.execPath, ['--import', 'tsx', 'bench/load.ts', file]);
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d));
    child.stderr!.on('data', (d: Buffer) => (err += d));
    child.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!) as LoadResult) : reject(new Error(`load failed: ${err}`)),
    );
  }).finally(() => fs.rmSync(file, { force: true }));
}

/**
 * Each path of a visitor-plane GET scenario once, 8 at a time: drawn at random, a thousand paths
 * were not all served within a warm-up on a busy machine, and their first renders were counted
 * (serve-page at 1.11 statements a request on PostgreSQL, 4.55 at a fifth of that rate).
 */
export async function visitEach(port: number, base: Omit<LoadSpec, 'duration'>): Promise<void> {
  const host = base.headers.host;
  if (base.method !== 'GET' || !host) return;
  const queue = [...new Set(base.paths)];
  const one = (path: string) =>
    new Promise<void>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path, headers: base.headers }, (res) => {
          res.resume();
          res.on('end', resolve);
        })
        .on('error', reject);
    });
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let path = queue.pop(); path !== undefined; path = queue.pop()) await one(path);
    }),
  );
}
