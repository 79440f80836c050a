/**
 * `node --import tsx bench/alternate.ts BEFORE.json AFTER.json [--only NAME,…] [--rounds N] [--seconds S]`
 *
 * Compares two held services (`npm run bench -- --hold FILE`, each from its own checkout and
 * database) by the service's CPU time a request: for each scenario both hold, `--rounds` rounds
 * (default 6), each loading one service then the other, the order alternating, warmed for 2 s and
 * measured for `--seconds` (default 5). CPU a request is read from /proc around the measured load,
 * so it does not move with what the idle core does meanwhile, as requests a second do (issue 47: no
 * scenario more than 5 % slower in alternating rounds).
 */
import fs from 'node:fs';
import type { LoadSpec } from './load.js';
import { warmedRound } from './processes.js';
import type { Held } from './run.js';

interface Measured {
  cpu: number;
  rps: number;
}

function parseArgs(argv: string[]) {
  const files = argv.filter((a, i) => !a.startsWith('--') && !argv[i - 1]?.startsWith('--'));
  const get = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i === -1 ? undefined : argv[i + 1];
  };
  if (files.length !== 2) throw new Error('give two files written by --hold: BEFORE.json AFTER.json');
  const rounds = Number(get('rounds') ?? 6);
  const seconds = Number(get('seconds') ?? 5);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds must be a whole number of at least 1');
  if (!(seconds >= 1)) throw new Error('--seconds must be at least 1');
  const held = files.map((f) => JSON.parse(fs.readFileSync(f, 'utf8')) as Held) as [Held, Held];
  return { held, only: (get('only') ?? '').split(',').filter(Boolean), rounds, seconds };
}

async function measure(held: Held, spec: Omit<LoadSpec, 'url' | 'connections' | 'duration'>, seconds: number): Promise<Measured> {
  const { rps, cpu, unexpected } = await warmedRound(held.pid, { ...spec, url: held.url, connections: 50 }, seconds);
  if (unexpected > 0) throw new Error(`${held.commit}: ${unexpected} errors or unexpected answers in ${seconds} s`);
  return { cpu, rps };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const us = (seconds: number) => (seconds * 1e6).toFixed(1);

async function main(): Promise<void> {
  const { held, only, rounds, seconds } = parseArgs(process.argv.slice(2));
  const [before, after] = held;
  for (const h of held) process.kill(h.pid, 0); // throws when a held service is gone
  const names = Object.keys(before.scenarios).filter((n) => n in after.scenarios && (only.length === 0 || only.includes(n)));
  console.log(
    `# ${before.commit} (before) against ${after.commit} (after), ${before.backend}, ${before.scale} scale, ${rounds} rounds of ${seconds} s`,
  );
  console.log(
    '| scenario | before, µs CPU a request | after, µs CPU a request | after ÷ before, each round | median | req/s, median after ÷ before |',
  );
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const name of names) {
    const sides: [Measured[], Measured[]] = [[], []];
    for (let round = 0; round < rounds; round++) {
      for (const side of round % 2 === 0 ? [0, 1] : [1, 0]) {
        const h = held[side]!;
        sides[side]!.push(await measure(h, h.scenarios[name]!, seconds));
      }
    }
    const [b, a] = sides;
    const cpuRatios = a.map((m, i) => m.cpu / b[i]!.cpu);
    const rpsRatios = a.map((m, i) => m.rps / b[i]!.rps);
    console.log(
      `| ${name} | ${b.map((m) => us(m.cpu)).join(' ')} | ${a.map((m) => us(m.cpu)).join(' ')} | ` +
        `${cpuRatios.map((r) => r.toFixed(2)).join(' ')} | ${median(cpuRatios).toFixed(2)} | ${median(rpsRatios).toFixed(2)} |`,
    );
  }
}

await main();
