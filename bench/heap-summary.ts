/**
 * `node --import tsx bench/heap-summary.ts <a.heapsnapshot> [<b.heapsnapshot>]`
 *
 * What a heap snapshot (`BENCH_HEAP_DIR`, bench/run.ts) holds, by kind of object: V8's type and,
 * for objects, the constructor's name, with their own sizes summed. Given two, what grew from the
 * first to the second, largest first: issue 50 asks what grows from one scenario to the next.
 * Own sizes, not retained ones: a grown group names what to look for, not who holds it.
 */
import fs from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

interface Group {
  count: number;
  bytes: number;
}

/** Strings of every kind count as one group; arrays and V8's own by their name; objects by constructor. */
function groupOf(type: string, name: string): string {
  if (type.endsWith('string')) return '(strings)';
  if (type === 'object' || type === 'native') return `${type} ${name}`;
  if (type === 'closure') return '(closures)';
  if (type === 'code') return '(code)';
  return `(${type}) ${name.length > 60 ? `${name.slice(0, 57)}...` : name}`;
}

function summarise(file: string): Map<string, Group> {
  const heap = JSON.parse(fs.readFileSync(file, 'utf8')) as Snapshot;
  const fields = heap.snapshot.meta.node_fields;
  const types = heap.snapshot.meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f));
  const groups = new Map<string, Group>();
  for (let i = 0; i < heap.nodes.length; i += fields.length) {
    const key = groupOf(types[heap.nodes[i + typeAt!]!] ?? '?', heap.strings[heap.nodes[i + nameAt!]!] ?? '');
    const group = groups.get(key) ?? { count: 0, bytes: 0 };
    group.count += 1;
    group.bytes += heap.nodes[i + sizeAt!]!;
    groups.set(key, group);
  }
  return groups;
}

const mb = (bytes: number) => `${(bytes / 1048576).toFixed(1).padStart(7)} MB`;
const total = (groups: Map<string, Group>) => [...groups.values()].reduce((n, g) => n + g.bytes, 0);

const [first, second] = process.argv.slice(2);
if (!first) throw new Error('usage: heap-summary.ts <a.heapsnapshot> [<b.heapsnapshot>]');
const a = summarise(first);
console.log(`${first}: ${mb(total(a))} in all`);
if (!second) {
  for (const [key, g] of [...a].sort((x, y) => y[1].bytes - x[1].bytes).slice(0, 30))
    console.log(`${mb(g.bytes)} ${String(g.count).padStart(9)}  ${key}`);
} else {
  const b = summarise(second);
  console.log(`${second}: ${mb(total(b))} in all, ${mb(total(b) - total(a))} more`);
  const grown = [...new Set([...a.keys(), ...b.keys()])].map((key) => {
    const [x, y] = [a.get(key) ?? { count: 0, bytes: 0 }, b.get(key) ?? { count: 0, bytes: 0 }];
    return { key, bytes: y.bytes - x.bytes, count: y.count - x.count, now: y.bytes };
  });
  for (const g of grown.sort((x, y) => Math.abs(y.bytes) - Math.abs(x.bytes)).slice(0, 30))
    console.log(`${mb(g.bytes)} ${String(g.count).padStart(9)}  (now ${mb(g.now).trim()})  ${g.key}`);
}
